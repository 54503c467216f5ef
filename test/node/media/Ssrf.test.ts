/**
 * Server-side request forgery corpus: URLs, DNS answers and redirects aimed at
 * loopback, private, link-local, reserved and transition addresses, in every
 * spelling. Each attempt is refused with the expected rule, and the private
 * target (a raw TCP listener on 127.0.0.1 and ::1 at the port every attempt
 * names) never receives a connection, nor does the plain HTTP server.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { MediaRule } from "../../../services/node/MediaFetcher.js"
import {
  type Answers,
  dialLocally,
  expectRefused,
  fetcher,
  MediaServers,
  MediaStore,
  publicV4,
  scriptedResolver,
  serversLayer,
  storeLayer
} from "./Testbed.js"

interface Attempt {
  readonly name: string
  /** `{target}`, `{media}`, `{plain}` and `{rebind}` stand for the servers' ports (encoded too). */
  readonly url: string
  readonly rule: MediaRule
  /** Allowed origins; default: only `https://media.test:{target}`, a name. */
  readonly origins?: ReadonlyArray<string>
  readonly answers?: Answers
}

/** Addresses written in the URL: never listed, so refused before any lookup or dial. */
const literalHosts: ReadonlyArray<[string, string]> = [
  ["IPv4 loopback", "127.0.0.1"],
  ["IPv4 loopback, other address", "127.8.9.10"],
  ["10/8", "10.0.0.1"],
  ["172.16/12", "172.16.0.1"],
  ["192.168/16", "192.168.1.1"],
  ["cloud metadata", "169.254.169.254"],
  ["unspecified", "0.0.0.0"],
  ["carrier-grade NAT", "100.64.0.1"],
  ["benchmarking", "198.18.0.1"],
  ["multicast", "224.0.0.1"],
  ["broadcast", "255.255.255.255"],
  ["IPv6 loopback", "[::1]"],
  ["IPv6 link-local", "[fe80::1]"],
  ["IPv6 unique-local", "[fc00::1]"],
  ["IPv4-mapped loopback, dotted", "[::ffff:127.0.0.1]"],
  ["IPv4-mapped loopback, hex", "[::ffff:7f00:1]"],
  ["IPv6 unspecified", "[::]"],
  ["NAT64 of loopback", "[64:ff9b::7f00:1]"],
  ["decimal spelling of 127.0.0.1", "2130706433"],
  ["octal spelling of 127.0.0.1", "0177.0.0.1"],
  ["hex spelling of 127.0.0.1", "0x7f.0.0.1"],
  ["short spelling of 127.0.0.1", "127.1"],
  ["localhost, not listed", "localhost"]
]

/** Answers a listed name may give: each one refused when dialled. */
const privateAnswers: ReadonlyArray<[string, ReadonlyArray<string>]> = [
  ["loopback", ["127.0.0.1"]],
  ["loopback elsewhere in 127/8", ["127.53.0.1"]],
  ["10/8", ["10.1.2.3"]],
  ["172.16/12", ["172.31.255.254"]],
  ["192.168/16", ["192.168.0.10"]],
  ["cloud metadata", ["169.254.169.254"]],
  ["unspecified", ["0.0.0.0"]],
  ["carrier-grade NAT", ["100.64.1.1"]],
  ["benchmarking", ["198.18.0.5"]],
  ["documentation", ["192.0.2.10"]],
  ["reserved 240/4", ["240.0.0.1"]],
  ["multicast", ["224.0.0.251"]],
  ["broadcast", ["255.255.255.255"]],
  ["IPv6 loopback", ["::1"]],
  ["IPv6 link-local", ["fe80::1"]],
  ["IPv6 unique-local", ["fc00::1"]],
  ["IPv4-mapped loopback, dotted", ["::ffff:127.0.0.1"]],
  ["IPv4-mapped loopback, hex", ["::ffff:7f00:1"]],
  ["IPv4-mapped private", ["::ffff:10.0.0.1"]],
  ["IPv6 unspecified", ["::"]],
  ["NAT64 of loopback", ["64:ff9b::7f00:1"]],
  ["6to4 of loopback", ["2002:7f00:1::1"]],
  ["IPv6 documentation", ["2001:db8::1"]],
  ["IPv6 multicast", ["ff02::1"]],
  ["public then private in one answer", [publicV4, "127.0.0.1"]],
  ["private then public in one answer", ["10.0.0.1", publicV4]],
  ["decimal spelling as an answer", ["2130706433"]],
  ["octal spelling as an answer", ["0177.0.0.1"]],
  ["hex spelling as an answer", ["0x7f.0.0.1"]],
  ["short spelling as an answer", ["127.1"]]
]

const attempts: ReadonlyArray<Attempt> = [
  ...literalHosts.map(([name, host]): Attempt => ({
    name: `URL host ${name} (${host})`,
    url: `https://${host}:{target}/a.mp3`,
    rule: "origin-not-allowed"
  })),
  ...privateAnswers.map(([name, answer]): Attempt => ({
    name: `listed name answering ${name} (${answer.join(", ")})`,
    url: "https://media.test:{target}/a.mp3",
    rule: "private-address",
    answers: { "media.test": answer }
  })),
  {
    name: "credentials in the URL (and a host spelled to look like the listed one)",
    url: "https://media.test:{target}@127.0.0.1:{target}/a.mp3",
    rule: "credentials-in-url"
  },
  { name: "plain http to the target", url: "http://127.0.0.1:{target}/a.mp3", rule: "https-only" },
  { name: "plain http to a listed name", url: "http://media.test:{target}/a.mp3", rule: "https-only" },
  { name: "file scheme", url: "file:///etc/passwd", rule: "https-only" },
  { name: "data scheme", url: "data:audio/wav;base64,UklGRg==", rule: "https-only" },
  { name: "listed name with a trailing dot", url: "https://media.test.:{target}/a.mp3", rule: "origin-not-allowed" },
  { name: "listed name as a suffix", url: "https://media.test.evil.example:{target}/a.mp3", rule: "origin-not-allowed" },
  // Redirects from the media server, whose origin (an address) is listed.
  ...[
    ["to loopback at the target port", "https://127.0.0.1:{target}/", "redirect-off-origin"],
    ["to IPv6 loopback", "https://[::1]:{target}/", "redirect-off-origin"],
    ["to cloud metadata", "https://169.254.169.254/latest/meta-data/", "redirect-off-origin"],
    ["to the same host by another name", "https://localhost:{media}/ok.wav", "redirect-off-origin"],
    ["protocol-relative to the target", "//127.0.0.1:{target}/", "redirect-off-origin"],
    ["to http on the same host", "http://127.0.0.1:{plain}/ok.wav", "https-only"],
    ["to http on the same host and port", "http://127.0.0.1:{media}/ok.wav", "https-only"],
    ["to a URL with credentials", "https://user:pass@127.0.0.1:{media}/ok.wav", "credentials-in-url"],
    ["to a URL with a user name only", "https://user@127.0.0.1:{media}/ok.wav", "credentials-in-url"],
    ["to a file URL", "file:///etc/passwd", "https-only"]
  ].map(([name, to, rule]): Attempt => ({
    name: `redirect ${name}`,
    url: `https://127.0.0.1:{media}/redirect?to=${encodeURIComponent(to!)}`,
    rule: rule as MediaRule,
    origins: ["https://127.0.0.1:{media}"]
  })),
  {
    name: "a chain of 4 redirects",
    url: "https://127.0.0.1:{media}/chain/4",
    rule: "too-many-redirects",
    origins: ["https://127.0.0.1:{media}"]
  }
]

layer(Layer.mergeAll(serversLayer, storeLayer()), { timeout: "60 seconds" })("SSRF corpus", (it) => {
  it("has at least 40 attempts", () => {
    expect(attempts.length).toBeGreaterThanOrEqual(40)
  })

  const fill = (text: string, ports: Record<string, number>) =>
    // Also inside an encoded redirect target (`%7Bmedia%7D`).
    text.replace(/(?:\{|%7B)(target|media|plain|rebind)(?:\}|%7D)/g, (_, name: string) => String(ports[name]))

  describe("each attempt is refused and nothing is dialled", () => {
    for (const attempt of attempts) {
      it.effect(`${attempt.rule}: ${attempt.name}`, () =>
        Effect.gen(function*() {
          const servers = yield* MediaServers
          const store = yield* MediaStore
          const ports = {
            target: servers.target.port,
            media: servers.media.port,
            plain: servers.plain.port,
            rebind: servers.rebind.port
          }
          const resolver = yield* scriptedResolver(attempt.answers ?? {})
          const media = yield* fetcher({
            origins: (attempt.origins ?? ["https://media.test:{target}"]).map((origin) => fill(origin, ports)),
            ca: servers.certificate.cert,
            resolver: resolver.service,
            // Even a public answer would only ever reach the local media server.
            dialVia: dialLocally
          })
          const plainBefore = servers.plain.connections()
          const refused = yield* expectRefused(
            attempt.rule,
            media.fetchAudio({ conversationId: store.conversationId, sources: [{ url: fill(attempt.url, ports) }] })
          )
          // Neither a resolved address nor credentials are told back.
          for (const address of Object.values(attempt.answers ?? {}).flat()) {
            expect(refused.message).not.toContain(address)
          }
          expect(refused.message).not.toMatch(/user:pass|user@/)
          expect(servers.target.connections()).toBe(0)
          expect(servers.plain.connections()).toBe(plainBefore)
          if (attempt.answers === undefined) expect(yield* resolver.asked).toEqual([])
        }))
    }
  })

  it.effect("rebinding: a name answering public, then private, is checked again at the next dial", () =>
    Effect.gen(function*() {
      const servers = yield* MediaServers
      const store = yield* MediaStore
      const origin = `https://rebind.test:${servers.rebind.port}`
      const resolver = yield* scriptedResolver({
        "rebind.test": (call) => (call === 1 ? [publicV4] : ["127.0.0.1"])
      })
      const media = yield* fetcher({
        origins: [origin],
        ca: servers.certificate.cert,
        resolver: resolver.service,
        dialVia: dialLocally
      })
      const connections = servers.rebind.connections()
      yield* expectRefused(
        "private-address",
        media.fetchAudio({ conversationId: store.conversationId, sources: [{ url: `${origin}/redirect?to=/ok.wav` }] })
      )
      expect(yield* resolver.asked).toEqual(["rebind.test", "rebind.test"])
      // The first hop reached the server; the rebound second one was never dialled.
      expect(servers.rebind.connections() - connections).toBe(1)
      expect(servers.rebind.requests.map((request) => request.path)).not.toContain("/ok.wav")
    }))

  it.effect("rebinding across fetches: the answer is never cached", () =>
    Effect.gen(function*() {
      const servers = yield* MediaServers
      const store = yield* MediaStore
      const origin = `https://rebind.test:${servers.rebind.port}`
      const resolver = yield* scriptedResolver({
        "rebind.test": (call) => (call === 1 ? [publicV4] : ["10.0.0.7"])
      })
      const media = yield* fetcher({
        origins: [origin],
        ca: servers.certificate.cert,
        resolver: resolver.service,
        dialVia: dialLocally
      })
      const fetch = media.fetchAudio({ conversationId: store.conversationId, sources: [{ url: `${origin}/ok.wav` }] })
      expect((yield* fetch).artifactRef.mimeType).toBe("audio/wav")
      yield* expectRefused("private-address", fetch)
    }))
})
