/**
 * The media policy's pure parts: the `CC_MEDIA_ORIGINS` list (and the one
 * warning the node logs when it ignores it), the URL and redirect checks, the
 * address classes, the declared type against the sniffed container.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Logger } from "effect"
import { layerConfig } from "../../../layers/node/media/MediaFetcher.js"
import {
  addressRange,
  artifactName,
  checkRedirect,
  checkSourceUrl,
  containerAgrees,
  isIdentityEncoding,
  isPublicAddress,
  MediaOriginsConfig,
  parseMediaOrigins
} from "../../../layers/node/media/Policy.js"
import { MediaResolver, ResolveFailed } from "../../../layers/node/media/Resolver.js"
import { ArtifactStore } from "../../../services/node/ArtifactStore.js"
import { MediaFetcher } from "../../../services/node/MediaFetcher.js"

describe("CC_MEDIA_ORIGINS", () => {
  it("is empty by default: nothing allowed", () => {
    expect(parseMediaOrigins("")).toEqual({ _tag: "Allowed", origins: [] })
    expect(parseMediaOrigins("  ")).toEqual({ _tag: "Allowed", origins: [] })
  })

  it("takes bare https origins, normalized as URL serializes them", () => {
    expect(
      parseMediaOrigins(
        "https://media.example.com, https://CDN.Example.org:8443,https://example.net:443,https://10.0.0.5,https://[::1]:9000,https://localhost:4000"
      )
    ).toEqual({
      _tag: "Allowed",
      origins: [
        "https://media.example.com",
        "https://cdn.example.org:8443",
        "https://example.net",
        "https://10.0.0.5",
        "https://[::1]:9000",
        "https://localhost:4000"
      ]
    })
    expect(parseMediaOrigins("https://a.example,https://a.example:443")).toEqual({
      _tag: "Allowed",
      origins: ["https://a.example"]
    })
  })

  const invalid = [
    "http://media.example.com",
    "media.example.com",
    "https://media.example.com/",
    "https://media.example.com/audio",
    "https://media.example.com?x=1",
    "https://media.example.com#x",
    "https://user@media.example.com",
    "https://user:secret@media.example.com",
    "https://media.example.com:0",
    "https://media.example.com:65536",
    "https://media.example.com:",
    "https://media.example.com:https",
    "https://2130706433",
    "https://0177.0.0.1",
    "https://0x7f.0.0.1",
    "https://127.1",
    "https://media_example.com",
    "https://-media.example.com",
    "https://[::1",
    "https://[zz::1]",
    "https://média.example.com",
    "wss://media.example.com",
    ""
  ]
  for (const entry of invalid) {
    it(`one invalid entry (${JSON.stringify(entry)}) ignores the whole list`, () => {
      const parsed = parseMediaOrigins(`https://good.example,${entry}`)
      expect(parsed).toEqual({ _tag: "Ignored", reason: expect.stringMatching(/^entry 2 of 2: /) })
    })
  }

  it("at most 32 origins: 33 ignore the whole list", () => {
    const origins = (count: number) => Array.from({ length: count }, (_, i) => `https://m${i}.example`).join(",")
    expect(parseMediaOrigins(origins(32))).toMatchObject({ _tag: "Allowed" })
    expect(parseMediaOrigins(origins(33))).toEqual({ _tag: "Ignored", reason: "33 entries, more than 32" })
  })

  it("is read through Config", () =>
    Effect.gen(function*() {
      const setting = yield* MediaOriginsConfig
      expect(setting).toEqual({ _tag: "Allowed", origins: ["https://media.example.com"] })
    }).pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["CC_MEDIA_ORIGINS", "https://media.example.com"]]))),
      Effect.runPromise
    ))

  it("an ignored list is reported once as a warning, without the entries, and allows nothing", () =>
    Effect.gen(function*() {
      const logged: Array<{ level: string; text: string }> = []
      const logger = Logger.make(({ logLevel, message }) => {
        logged.push({ level: logLevel.label, text: JSON.stringify(message) })
      })
      const stubs = Layer.mergeAll(
        Layer.succeed(ArtifactStore, ArtifactStore.of({
          create: () => Effect.die("not used"),
          get: () => Effect.die("not used"),
          read: () => Effect.die("not used"),
          usage: Effect.die("not used"),
          begin: () => Effect.die("not used"),
          append: () => Effect.die("not used"),
          appendAt: () => Effect.die("not used"),
          finalize: () => Effect.die("not used"),
          pick: () => Effect.die("not used"),
          readFor: () => Effect.die("not used"),
          attach: () => Effect.die("not used"),
          discard: () => Effect.die("not used"),
          sweep: Effect.die("not used")
        })),
        Layer.succeed(MediaResolver, { resolve: () => Effect.fail(new ResolveFailed({ code: "ENOTFOUND" })) })
      )
      const program = Effect.gen(function*() {
        const media = yield* MediaFetcher
        for (let i = 0; i < 3; i++) {
          const refused = yield* Effect.flip(
            media.fetchAudio({ conversationId: "conv_x", sources: [{ url: "https://ok.example/a.mp3" }] })
          )
          expect(refused).toMatchObject({ rule: "origin-not-allowed" })
        }
      })
      yield* program.pipe(
        Effect.provide(layerConfig().pipe(Layer.provide(stubs))),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map([["CC_MEDIA_ORIGINS", "https://ok.example,https://user:hunter2@x.example"]]))
        )
      )
      const warnings = logged.filter((entry) => entry.level === "WARN")
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.text).toContain("CC_MEDIA_ORIGINS is ignored")
      expect(warnings[0]!.text).toContain("entry 2 of 2")
      expect(logged.map((entry) => entry.text).join("\n")).not.toMatch(/hunter2|x\.example/)
    }).pipe(Effect.runPromise))
})

describe("source URL and redirects", () => {
  const allowed = new Set(["https://media.example", "https://127.0.0.1:8443"])
  const ruleOf = (result: Either.Either<URL, { rule: string }>) => Either.isLeft(result) ? result.left.rule : "ok"

  it("checks https, then credentials, then the origin", () => {
    expect(ruleOf(checkSourceUrl("https://media.example/a.mp3", allowed))).toBe("ok")
    expect(ruleOf(checkSourceUrl("https://MEDIA.example:443/a.mp3#t=3", allowed))).toBe("ok")
    expect(ruleOf(checkSourceUrl("https://2130706433:8443/a.mp3", allowed))).toBe("ok") // the listed address, spelled otherwise
    expect(ruleOf(checkSourceUrl("http://media.example/a.mp3", allowed))).toBe("https-only")
    expect(ruleOf(checkSourceUrl("http://u:p@elsewhere.example/", allowed))).toBe("https-only")
    expect(ruleOf(checkSourceUrl("https://u:p@elsewhere.example/", allowed))).toBe("credentials-in-url")
    expect(ruleOf(checkSourceUrl("https://elsewhere.example/", allowed))).toBe("origin-not-allowed")
    expect(ruleOf(checkSourceUrl("https://media.example:8443/", allowed))).toBe("origin-not-allowed")
    expect(ruleOf(checkSourceUrl("/relative.mp3", allowed))).toBe("source")
  })

  it("a redirect keeps https, no credentials and the same origin", () => {
    const from = new URL("https://media.example/a.mp3")
    expect(ruleOf(checkRedirect("/b.mp3", from))).toBe("ok")
    expect(ruleOf(checkRedirect("https://media.example:443/b.mp3", from))).toBe("ok")
    expect(ruleOf(checkRedirect("http://media.example/b.mp3", from))).toBe("https-only")
    expect(ruleOf(checkRedirect("https://u@media.example/b.mp3", from))).toBe("credentials-in-url")
    expect(ruleOf(checkRedirect("https://cdn.media.example/b.mp3", from))).toBe("redirect-off-origin")
    expect(ruleOf(checkRedirect("//127.0.0.1/b.mp3", from))).toBe("redirect-off-origin")
    expect(ruleOf(checkRedirect("https://[", from))).toBe("fetch-failed")
  })
})

describe("addresses", () => {
  it("only public unicast addresses may be dialled", () => {
    for (const address of ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.215.14"]) {
      expect([address, isPublicAddress(address)]).toEqual([address, true])
    }
    const refused: Record<string, string> = {
      "127.0.0.1": "loopback",
      "10.0.0.1": "private",
      "172.16.0.1": "private",
      "192.168.1.1": "private",
      "169.254.169.254": "linkLocal",
      "0.0.0.0": "unspecified",
      "100.64.0.1": "carrierGradeNat",
      "198.18.0.1": "reserved",
      "192.0.2.1": "reserved",
      "224.0.0.1": "multicast",
      "255.255.255.255": "broadcast",
      "::1": "loopback",
      "fe80::1": "linkLocal",
      "fc00::1": "uniqueLocal",
      "::ffff:127.0.0.1": "loopback",
      "::ffff:7f00:1": "loopback",
      "::": "unspecified",
      "64:ff9b::7f00:1": "rfc6052",
      "2002:7f00:1::1": "6to4",
      "2001:db8::1": "reserved",
      "2130706433": "invalid",
      "0177.0.0.1": "invalid",
      "127.1": "invalid",
      "media.example": "invalid"
    }
    for (const [address, range] of Object.entries(refused)) {
      expect([address, addressRange(address), isPublicAddress(address)]).toEqual([address, range, false])
    }
  })
})

describe("types and names", () => {
  it("the sniffed container must be the declared type's", () => {
    expect(containerAgrees("audio/mpeg", "mp3")).toBe(true)
    expect(containerAgrees("audio/ogg", "ogg")).toBe(true)
    expect(containerAgrees("audio/ogg", "opus")).toBe(true)
    expect(containerAgrees("audio/ogg", "oga")).toBe(true)
    expect(containerAgrees("audio/wav", "wav")).toBe(true)
    expect(containerAgrees("audio/webm", "webm")).toBe(true)
    expect(containerAgrees("audio/mpeg", "wav")).toBe(false)
    expect(containerAgrees("audio/webm", "mkv")).toBe(false)
    expect(containerAgrees("audio/ogg", "ogv")).toBe(false)
    expect(containerAgrees("audio/wav", undefined)).toBe(false)
  })

  it("only identity or chunked transfers are accepted", () => {
    expect(isIdentityEncoding(undefined, undefined)).toBe(true)
    expect(isIdentityEncoding("identity", "chunked")).toBe(true)
    expect(isIdentityEncoding("gzip", undefined)).toBe(false)
    expect(isIdentityEncoding("br", undefined)).toBe(false)
    expect(isIdentityEncoding(undefined, "gzip, chunked")).toBe(false)
  })

  it("the artifact name is the last path segment, made safe", () => {
    expect(artifactName(new URL("https://m.example/a/b/track%201.mp3?x=1"), "audio/mpeg")).toBe("track 1.mp3")
    expect(artifactName(new URL("https://m.example/a/%2e%2e"), "audio/mpeg")).toBe("audio.mpeg")
    expect(artifactName(new URL("https://m.example/"), "audio/ogg")).toBe("audio.ogg")
    expect(artifactName(new URL("https://m.example/x%2Fy%0A.wav"), "audio/wav")).toBe("x_y_.wav")
    expect(artifactName(new URL("https://m.example/%E0%A4%A"), "audio/wav")).toBe("%E0%A4%A")
  })
})
