/**
 * The media fetcher against real local HTTPS servers (a self-signed
 * certificate trusted only by the fetcher under test): the files that pass
 * and how they are stored, and every rule of the media policy with its exact
 * message suffix, each refusal storing nothing.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as SqlArtifactStore from "../../../layers/node/sql/SqlArtifactStore.js"
import { ArtifactStore } from "../../../services/node/ArtifactStore.js"
import type { MediaSource } from "../../../services/node/MediaFetcher.js"
import {
  dialLocally,
  durations,
  expectRefused,
  fetcher,
  files,
  MediaServers,
  MediaStore,
  publicV4,
  publicV6,
  scriptedResolver,
  serversLayer,
  storeLayer
} from "./Testbed.js"

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** A fetcher allowing the media server's origin as written (`https://127.0.0.1:PORT`), trusting its certificate. */
const literalFetcher = Effect.gen(function*() {
  const servers = yield* MediaServers
  const origin = `https://127.0.0.1:${servers.media.port}`
  const media = yield* fetcher({ origins: [origin], ca: servers.certificate.cert })
  const store = yield* MediaStore
  return {
    origin,
    fetch: (pathOrSources: string | ReadonlyArray<MediaSource>, conversationId = store.conversationId) =>
      media.fetchAudio({
        conversationId,
        sources: typeof pathOrSources === "string" ? [{ url: `${origin}${pathOrSources}` }] : pathOrSources
      })
  }
})

const fetchPath = (pathname: string) => Effect.flatMap(literalFetcher, (media) => media.fetch(pathname))

layer(Layer.mergeAll(serversLayer, storeLayer()), { timeout: "60 seconds" })("MediaFetcher", (it) => {
  describe("files that pass", () => {
    const cases = [
      { file: "/ok.wav", type: "audio/wav", bytes: files.wav, duration: durations.wav },
      { file: "/ok.mp3", type: "audio/mpeg", bytes: files.mp3, duration: durations.mp3 },
      { file: "/ok.ogg", type: "audio/ogg", bytes: files.ogg, duration: durations.ogg },
      { file: "/ok.webm", type: "audio/webm", bytes: files.webm, duration: durations.webm }
    ] as const
    for (const { bytes, duration, file, type } of cases) {
      it.effect(`${type} is stored as a media artifact with its bytes, row and duration`, () =>
        Effect.gen(function*() {
          const store = yield* MediaStore
          yield* TestClock.setTime(Date.parse("2031-02-03T04:05:06.000Z"))
          const result = yield* fetchPath(file)
          expect(result.durationSeconds).toBeCloseTo(duration, 6)
          expect(result.artifactRef).toEqual({
            v: 1,
            artifactId: expect.stringMatching(/^art_[A-Za-z0-9_-]+$/),
            kind: "media",
            mimeType: type,
            sizeBytes: bytes.length,
            name: file.slice(1),
            digest: `sha256:${sha256(bytes)}`
          })
          const onDisk = path.join(SqlArtifactStore.artifactsDir(store.dataDir), result.artifactRef.artifactId)
          expect(new Uint8Array(fs.readFileSync(onDisk))).toEqual(bytes)
          expect(fs.statSync(onDisk).mode & 0o777).toBe(0o600)
          expect((yield* store.files).filter((name) => name.endsWith(".tmp"))).toEqual([])
          const rows = yield* store.rows(store.conversationId)
          expect(rows.find((row) => row.id === result.artifactRef.artifactId)).toMatchObject({
            conversationId: store.conversationId,
            kind: "media",
            mimeType: type,
            name: file.slice(1),
            sizeBytes: bytes.length,
            sha256: sha256(bytes),
            state: "finalized",
            createdAt: "2031-02-03T04:05:06.000Z"
          })
        }))
    }

    it.effect("a localhost origin names the loopback address and is allowed", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        const store = yield* MediaStore
        const origin = `https://localhost:${servers.media.port}`
        const media = yield* fetcher({ origins: [origin], ca: servers.certificate.cert })
        const result = yield* media.fetchAudio({ conversationId: store.conversationId, sources: [{ url: `${origin}/ok.wav` }] })
        expect(result.artifactRef.sizeBytes).toBe(files.wav.length)
      }))

    for (const answer of [publicV4, publicV6, `::ffff:${publicV4}`]) {
      it.effect(`a name answering a public address (${answer}) is fetched, one lookup per connection`, () =>
        Effect.gen(function*() {
          const servers = yield* MediaServers
          const store = yield* MediaStore
          const origin = `https://media.test:${servers.media.port}`
          const resolver = yield* scriptedResolver({ "media.test": [answer] })
          const media = yield* fetcher({ origins: [origin], ca: servers.certificate.cert, resolver: resolver.service, dialVia: dialLocally })
          const result = yield* media.fetchAudio({
            conversationId: store.conversationId,
            sources: [{ url: `${origin}/redirect?to=/ok.mp3` }]
          })
          expect(result.artifactRef.mimeType).toBe("audio/mpeg")
          expect(yield* resolver.asked).toEqual(["media.test", "media.test"])
        }))
    }

    it.effect("parameters and letter case of the declared type are ignored", () =>
      Effect.gen(function*() {
        const result = yield* fetchPath("/params.mp3")
        expect(result.artifactRef.mimeType).toBe("audio/mpeg")
      }))

    it.effect("identity content-encoding and a chunked body are not compression", () =>
      Effect.gen(function*() {
        expect((yield* fetchPath("/identity.wav")).artifactRef.sizeBytes).toBe(files.wav.length)
        expect((yield* fetchPath("/chunked.ogg")).artifactRef.sizeBytes).toBe(files.ogg.length)
      }))

    it.effect("exactly one hour and exactly 25 MiB pass", () =>
      Effect.gen(function*() {
        expect((yield* fetchPath("/hour.wav")).durationSeconds).toBe(3600)
        const limit = yield* fetchPath("/limit.wav")
        expect(limit.artifactRef.sizeBytes).toBe(25 * 1024 * 1024)
        expect(limit.artifactRef.digest).toBe(`sha256:${sha256(files.limit)}`)
      }))

    it.effect("three redirects on the same origin are followed, with every redirect status", () =>
      Effect.gen(function*() {
        expect((yield* fetchPath("/chain/3")).artifactRef.mimeType).toBe("audio/wav")
        for (const status of [301, 302, 303, 307, 308]) {
          expect((yield* fetchPath(`/redirect?status=${status}&to=/ok.ogg`)).artifactRef.mimeType).toBe("audio/ogg")
        }
      }))

    it.effect("the artifact is named after the last path segment", () =>
      Effect.gen(function*() {
        expect((yield* fetchPath("/sub/dir/song%20one.wav")).artifactRef.name).toBe("song one.wav")
      }))

    it.effect("requests carry no cookie, authorization or referrer, ask for identity, and use a fresh connection each", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        const requestsBefore = servers.media.requests.length
        const connectionsBefore = servers.media.connections()
        yield* fetchPath("/set-cookie")
        const seen = servers.media.requests.slice(requestsBefore)
        expect(seen.map((request) => request.path)).toEqual(["/set-cookie", "/ok.wav"])
        for (const request of seen) {
          expect(request.headers.cookie).toBeUndefined()
          expect(request.headers.authorization).toBeUndefined()
          expect(request.headers.referer).toBeUndefined()
          expect(request.headers["accept-encoding"]).toBe("identity")
          expect(request.headers.connection).toBe("close")
        }
        expect(servers.media.connections() - connectionsBefore).toBe(2)
      }))
  })

  describe("reusing an artifact the node holds", () => {
    it.effect("an audio artifact of the same conversation is returned as it is, nothing new stored", () =>
      Effect.gen(function*() {
        const store = yield* MediaStore
        const media = yield* literalFetcher
        const first = yield* media.fetch("/ok.webm")
        const rows = (yield* store.rows(store.conversationId)).length
        const again = yield* media.fetch([{ artifactId: first.artifactRef.artifactId }])
        expect(again).toEqual(first)
        expect((yield* store.rows(store.conversationId)).length).toBe(rows)
      }))

    it.effect("an id the node did not issue, or issued for another conversation, is refused as source", () =>
      Effect.gen(function*() {
        const store = yield* MediaStore
        const media = yield* literalFetcher
        const other = yield* store.newConversation
        const elsewhere = yield* media.fetch("/ok.wav", other)
        yield* expectRefused("source", media.fetch([{ artifactId: elsewhere.artifactRef.artifactId }]))
        yield* expectRefused("source", media.fetch([{ artifactId: "art_neverIssuedByThisNode" }]))
        yield* expectRefused("source", media.fetch([{ artifactId: "../../etc/passwd" }]))
      }))

    it.effect("a stored artifact that is not audio is refused as type-not-allowed", () =>
      Effect.gen(function*() {
        const store = yield* MediaStore
        const artifacts = yield* ArtifactStore
        const media = yield* literalFetcher
        const image = yield* artifacts.create({
          conversationId: store.conversationId,
          kind: "widget",
          mimeType: "image/png",
          name: "picture.png",
          bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47])
        })
        yield* expectRefused("type-not-allowed", media.fetch([{ artifactId: image.artifactId }]))
      }))
  })

  describe("refusals", () => {
    it.effect("origin-not-allowed: another port, another host, an empty list", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        const store = yield* MediaStore
        const media = yield* literalFetcher
        const requests = servers.media.requests.length
        yield* expectRefused("origin-not-allowed", media.fetch([{ url: `https://127.0.0.1:${servers.rebind.port}/ok.wav` }]))
        yield* expectRefused("origin-not-allowed", media.fetch([{ url: `https://localhost:${servers.media.port}/ok.wav` }]))
        const none = yield* fetcher({ origins: [], ca: servers.certificate.cert })
        const refused = yield* expectRefused(
          "origin-not-allowed",
          none.fetchAudio({ conversationId: store.conversationId, sources: [{ url: `${media.origin}/ok.wav` }] })
        )
        expect(refused.message).toBe(
          `The origin ${media.origin} is not in CC_MEDIA_ORIGINS (media policy rule: origin-not-allowed)`
        )
        expect(servers.media.requests.length).toBe(requests)
      }))

    it.effect("https-only: plain http is never dialled, even when its host and port are listed", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        const store = yield* MediaStore
        const media = yield* fetcher({ origins: [`https://127.0.0.1:${servers.plain.port}`] })
        yield* expectRefused(
          "https-only",
          media.fetchAudio({ conversationId: store.conversationId, sources: [{ url: `http://127.0.0.1:${servers.plain.port}/ok.wav` }] })
        )
        expect(servers.plain.connections()).toBe(0)
      }))

    it.effect("credentials-in-url: a user name or password, never echoed", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        const media = yield* literalFetcher
        const requests = servers.media.requests.length
        const withPassword = yield* expectRefused(
          "credentials-in-url",
          media.fetch([{ url: `https://alice:s3cret@127.0.0.1:${servers.media.port}/ok.wav` }])
        )
        expect(withPassword.message).not.toMatch(/alice|s3cret/)
        yield* expectRefused("credentials-in-url", media.fetch([{ url: `https://alice@127.0.0.1:${servers.media.port}/ok.wav` }]))
        expect(servers.media.requests.length).toBe(requests)
      }))

    it.effect("private-address: a listed name answering loopback is never dialled", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        const store = yield* MediaStore
        const origin = `https://media.test:${servers.target.port}`
        const resolver = yield* scriptedResolver({ "media.test": ["127.0.0.1"] })
        const media = yield* fetcher({ origins: [origin], ca: servers.certificate.cert, resolver: resolver.service })
        const refused = yield* expectRefused(
          "private-address",
          media.fetchAudio({ conversationId: store.conversationId, sources: [{ url: `${origin}/ok.wav` }] })
        )
        expect(refused.message).not.toContain("127.0.0.1")
        expect(servers.target.connections()).toBe(0)
      }))

    it.effect("redirect-off-origin and too-many-redirects", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        yield* expectRefused("redirect-off-origin", fetchPath(`/redirect?to=https://localhost:${servers.media.port}/ok.wav`))
        yield* expectRefused("too-many-redirects", fetchPath("/chain/4"))
      }))

    it.effect("type-not-allowed: html, video, no Content-Type", () =>
      Effect.gen(function*() {
        yield* expectRefused("type-not-allowed", fetchPath("/page.html"))
        yield* expectRefused("type-not-allowed", fetchPath("/video.mp4"))
        yield* expectRefused("type-not-allowed", fetchPath("/untyped"))
      }))

    it.effect("type-mismatch: bytes of another container, unknown bytes, a compressed transfer", () =>
      Effect.gen(function*() {
        yield* expectRefused("type-mismatch", fetchPath("/mismatch.mp3"))
        yield* expectRefused("type-mismatch", fetchPath("/mismatch.webm"))
        yield* expectRefused("type-mismatch", fetchPath("/garbage.ogg"))
        yield* expectRefused("type-mismatch", fetchPath("/gzip.wav"))
        yield* expectRefused("type-mismatch", fetchPath("/gzip-transfer.wav"))
      }))

    it.effect("too-large: a declared length over 25 MiB is refused before reading, a longer body stops the read", () =>
      Effect.gen(function*() {
        yield* expectRefused("too-large", fetchPath("/declared-huge.wav"))
        yield* expectRefused("too-large", fetchPath("/streamed-huge.wav"))
      }))

    it.effect("too-long and duration-unknown", () =>
      Effect.gen(function*() {
        yield* expectRefused("too-long", fetchPath("/long.wav"))
        yield* expectRefused("duration-unknown", fetchPath("/nolength.webm"))
      }))

    it.effect("timeout: the whole fetch is bounded by 30 s (TestClock), and the connection is dropped", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        const arrived = servers.routes.stallArrived()
        const closed = servers.routes.stallClosed()
        const fiber = yield* Effect.fork(expectRefused("timeout", fetchPath("/stall")))
        yield* Effect.promise(() => arrived)
        yield* TestClock.adjust("29 seconds")
        expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
        yield* TestClock.adjust("1 second")
        const refused = yield* Fiber.join(fiber)
        expect(refused.message).toBe("The fetch took longer than 30s (media policy rule: timeout)")
        yield* Effect.promise(() => closed)
      }))

    it.effect("not-found: 404 and 410", () =>
      Effect.gen(function*() {
        yield* expectRefused("not-found", fetchPath("/missing"))
        yield* expectRefused("not-found", fetchPath("/gone"))
      }))

    it.effect("fetch-failed: a server error, a cut body, a redirect without location, an unknown name", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        const store = yield* MediaStore
        yield* expectRefused("fetch-failed", fetchPath("/broken"))
        yield* expectRefused("fetch-failed", fetchPath("/cut.wav"))
        yield* expectRefused("fetch-failed", fetchPath("/redirect-without-location"))
        const origin = `https://nowhere.test:${servers.media.port}`
        const resolver = yield* scriptedResolver({})
        const media = yield* fetcher({ origins: [origin], resolver: resolver.service })
        yield* expectRefused(
          "fetch-failed",
          media.fetchAudio({ conversationId: store.conversationId, sources: [{ url: `${origin}/ok.wav` }] })
        )
      }))

    it.effect("fetch-failed: a certificate the fetcher was not told to trust", () =>
      Effect.gen(function*() {
        const servers = yield* MediaServers
        const store = yield* MediaStore
        const origin = `https://127.0.0.1:${servers.media.port}`
        const media = yield* fetcher({ origins: [origin] })
        const refused = yield* expectRefused(
          "fetch-failed",
          media.fetchAudio({ conversationId: store.conversationId, sources: [{ url: `${origin}/ok.wav` }] })
        )
        expect(refused.message).toMatch(/SELF_SIGNED|CERT|certificate/i)
      }))

    it.effect("source: not exactly one source, a malformed source, a malformed URL", () =>
      Effect.gen(function*() {
        const media = yield* literalFetcher
        const url = `${media.origin}/ok.wav`
        yield* expectRefused("source", media.fetch([]))
        yield* expectRefused("source", media.fetch([{ url }, { url }]))
        yield* expectRefused("source", media.fetch([{ url, artifactId: "art_x" } as unknown as MediaSource]))
        yield* expectRefused("source", media.fetch([{ href: url } as unknown as MediaSource]))
        yield* expectRefused("source", media.fetch([{ url: 42 } as unknown as MediaSource]))
        yield* expectRefused("source", media.fetch("not a url" as unknown as ReadonlyArray<MediaSource>))
        yield* expectRefused("source", media.fetch([{ url: "https://" }]))
        yield* expectRefused("source", media.fetch([{ url: `${media.origin}/${"a".repeat(2100)}` }]))
      }))

    it.effect("a conversation that does not exist: ConversationNotFound, nothing stored", () =>
      Effect.gen(function*() {
        const store = yield* MediaStore
        const media = yield* literalFetcher
        const before = yield* store.files
        const error = yield* Effect.flip(media.fetch("/ok.wav", "conv_gone"))
        expect(error).toMatchObject({ _tag: "ConversationNotFound", conversationId: "conv_gone" })
        expect(yield* store.files).toEqual(before)
      }))
  })
})

layer(Layer.mergeAll(serversLayer, storeLayer({ quotaBytes: 2 * files.wav.length + 10 })), { timeout: "60 seconds" })(
  "MediaFetcher storage quota",
  (it) => {
    it.effect("a file that does not fit in the quota is refused as quota-exceeded, nothing stored", () =>
      Effect.gen(function*() {
        yield* fetchPath("/ok.wav")
        yield* fetchPath("/ok.wav")
        const refused = yield* expectRefused("quota-exceeded", fetchPath("/ok.wav"))
        expect(refused.message).toBe("The node's artifact storage has no room for the file (media policy rule: quota-exceeded)")
      }))
  }
)
