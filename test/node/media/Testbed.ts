/**
 * Shared pieces of the media tests: real local servers (HTTPS with a
 * self-signed certificate, plain HTTP, and a raw TCP "private target" that
 * only counts connections), a scripted resolver, the node's database with an
 * artifact store on a temporary data dir, and a fetcher built per test with
 * its own origins.
 */
import { expect } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { type Options as FetcherOptions, make as makeFetcher } from "../../../layers/node/media/MediaFetcher.js"
import { MediaResolver, ResolveFailed, type ResolvedAddress } from "../../../layers/node/media/Resolver.js"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import * as SqlArtifactStore from "../../../layers/node/sql/SqlArtifactStore.js"
import * as SqlConversationStore from "../../../layers/node/sql/SqlConversationStore.js"
import { ArtifactStore, type ConversationNotFound } from "../../../services/node/ArtifactStore.js"
import { ConversationStore } from "../../../services/node/ConversationStore.js"
import type { MediaFetcher, MediaRefused, MediaRule } from "../../../services/node/MediaFetcher.js"
import { type Certificate, selfSignedCertificate } from "../../support/Tls.js"
import { type MediaRoutes, mediaRoutes } from "./MediaRoutes.js"

// The routes' files live in MediaRoutes.ts; the tests import them from here with the rest of the testbed.
export { durations, files } from "./MediaRoutes.js"

// ---------------------------------------------------------------------------
// Servers

export interface SeenRequest {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly remoteAddress: string | undefined
}

export interface RunningServer {
  readonly port: number
  /** Every request, in arrival order. */
  readonly requests: Array<SeenRequest>
  /** TCP connections accepted so far. */
  readonly connections: () => number
}

export type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void

const listen = (server: net.Server, port: number, host: string) =>
  Effect.async<number, Error>((resume) => {
    const onError = (error: Error) => resume(Effect.fail(error))
    server.once("error", onError)
    server.listen(port, host, () => {
      server.off("error", onError)
      const address = server.address()
      resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const close = (server: net.Server) =>
  Effect.async<void>((resume) => {
    // Stalled test routes keep their sockets open: end them with the server.
    if (server instanceof http.Server) server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })

const serve = (server: http.Server | https.Server, handler: Handler, host: string) =>
  Effect.gen(function*() {
    const requests: Array<SeenRequest> = []
    let connections = 0
    // `connection` fires for TLS servers too (before the handshake): every dial counts.
    server.on("connection", () => connections++)
    server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
      requests.push({
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        remoteAddress: request.socket.remoteAddress
      })
      handler(request, response)
    })
    const port = yield* Effect.acquireRelease(Effect.orDie(listen(server, 0, host)), () => close(server))
    return { port, requests, connections: () => connections } satisfies RunningServer
  })

export const httpsServer = (certificate: Certificate, handler: Handler, host = "127.0.0.1") =>
  serve(https.createServer({ key: certificate.key, cert: certificate.cert }), handler, host)

export const httpServer = (handler: Handler, host = "127.0.0.1") => serve(http.createServer(), handler, host)

/**
 * A raw TCP listener on 127.0.0.1 and ::1 at the same port, standing in for
 * an internal service: any connection at all, TLS or not, is counted and dropped.
 */
export const privateTarget = Effect.gen(function*() {
  let connections = 0
  const make = () => net.createServer((socket) => {
    connections++
    socket.destroy()
  })
  const v4 = make()
  const port = yield* Effect.acquireRelease(Effect.orDie(listen(v4, 0, "127.0.0.1")), () => close(v4))
  const v6 = make()
  yield* Effect.acquireRelease(
    listen(v6, port, "::1").pipe(Effect.option),
    () => close(v6)
  )
  return { port, connections: () => connections }
})

// ---------------------------------------------------------------------------
// Resolver

/** Per name: a fixed answer, or answers by call number (1, 2, …) to change it between lookups. */
export type Answers = Record<string, ReadonlyArray<string> | ((call: number) => ReadonlyArray<string>)>

export const familyOf = (address: string): 4 | 6 => (address.includes(":") ? 6 : 4)

/** A resolver scripted by the test, with the names it was asked in order. */
export const scriptedResolver = (answers: Answers) =>
  Effect.gen(function*() {
    const asked = yield* Ref.make<ReadonlyArray<string>>([])
    const counts = new Map<string, number>()
    const service = MediaResolver.of({
      resolve: (hostname) =>
        Effect.gen(function*() {
          yield* Ref.update(asked, (names) => [...names, hostname])
          const call = (counts.get(hostname) ?? 0) + 1
          counts.set(hostname, call)
          const answer = answers[hostname]
          if (answer === undefined) return yield* Effect.fail(new ResolveFailed({ code: "ENOTFOUND" }))
          const addresses = typeof answer === "function" ? answer(call) : answer
          return addresses.map((address): ResolvedAddress => ({ address, family: familyOf(address) }))
        })
    })
    return { service, asked: Ref.get(asked) }
  })

/** Tests only: every public answer is dialled at 127.0.0.1, where a test server stands in for it. */
export const dialLocally = (): ResolvedAddress => ({ address: "127.0.0.1", family: 4 })

/** Public addresses (ipaddr.js `unicast`) a scripted name may answer. */
export const publicV4 = "93.184.215.14"
export const publicV6 = "2606:4700:4700::1111"

// ---------------------------------------------------------------------------
// Database and store

export interface Store {
  readonly dataDir: string
  readonly conversationId: string
  readonly newConversation: Effect.Effect<string>
  /** Artifact rows of a conversation. */
  readonly rows: (conversationId: string) => Effect.Effect<ReadonlyArray<Record<string, unknown>>>
  /** Every name under `<dataDir>/artifacts/`. */
  readonly files: Effect.Effect<ReadonlyArray<string>>
}

export class MediaStore extends Context.Tag("test/media/MediaStore")<MediaStore, Store>() {}

/** The node database on a fresh data dir, with the artifact store and one conversation. */
export const storeLayer = (options: { readonly quotaBytes?: number } = {}) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-media-"))
  const database = NodeDatabase.layer(dataDir)
  const stores = Layer.mergeAll(
    SqlArtifactStore.layer({ dataDir, quotaBytes: options.quotaBytes }),
    SqlConversationStore.layer
  ).pipe(Layer.provideMerge(database))
  const store = Layer.scoped(
    MediaStore,
    Effect.gen(function*() {
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true })))
      const sql = yield* SqlClient.SqlClient
      const conversations = yield* ConversationStore
      const newConversation = Effect.map(conversations.create("node_test", "media"), (conversation) => conversation.id)
      return {
        dataDir,
        conversationId: yield* newConversation,
        newConversation,
        rows: (conversationId: string) =>
          Effect.orDie(sql<Record<string, unknown>>`SELECT * FROM artifacts WHERE conversation_id = ${conversationId}`),
        files: Effect.sync(() => fs.readdirSync(SqlArtifactStore.artifactsDir(dataDir)).sort())
      }
    })
  )
  return store.pipe(Layer.provideMerge(stores))
}

// ---------------------------------------------------------------------------
// Fetcher

export const certificateNames = { dns: ["media.test", "rebind.test", "named.test"] }

export const testCertificate = selfSignedCertificate(certificateNames)

/** A fetcher with the given origins and resolver, over the testbed's store. */
export const fetcher = (
  options: Omit<FetcherOptions, "origins"> & {
    readonly origins: ReadonlyArray<string>
    readonly resolver?: MediaResolver["Type"]
  }
): Effect.Effect<MediaFetcher["Type"], never, ArtifactStore> =>
  makeFetcher(options).pipe(
    Effect.provideService(
      MediaResolver,
      options.resolver ?? MediaResolver.of({ resolve: () => Effect.fail(new ResolveFailed({ code: "ENOTFOUND" })) })
    )
  )

// ---------------------------------------------------------------------------
// The servers of one test file

export interface Servers {
  readonly certificate: Certificate
  /** HTTPS on 127.0.0.1 with the media routes; its origins are allowed as written. */
  readonly media: RunningServer
  readonly routes: MediaRoutes
  /** HTTPS on 127.0.0.1 with the same routes, alone, for the rebinding test's connection count. */
  readonly rebind: RunningServer
  /** Plain HTTP on 127.0.0.1 with the same routes: must never be asked anything. */
  readonly plain: RunningServer
  /** Raw TCP on 127.0.0.1 and ::1: must never receive a connection. */
  readonly target: { readonly port: number; readonly connections: () => number }
}

export class MediaServers extends Context.Tag("test/media/MediaServers")<MediaServers, Servers>() {}

export const serversLayer = Layer.scoped(
  MediaServers,
  Effect.gen(function*() {
    const certificate = yield* testCertificate
    const routes = mediaRoutes()
    return {
      certificate,
      routes,
      media: yield* httpsServer(certificate, routes.handler),
      rebind: yield* httpsServer(certificate, routes.handler),
      plain: yield* httpServer(routes.handler),
      target: yield* privateTarget
    }
  })
)

// ---------------------------------------------------------------------------
// Assertions

/** The refusal's rule and message suffix; and that the refusal stored nothing (no row, no file, no temp file). */
export const expectRefused = <A, R>(
  rule: MediaRule,
  attempt: Effect.Effect<A, MediaRefused | ConversationNotFound, R>
): Effect.Effect<MediaRefused, never, R | MediaStore> =>
  Effect.gen(function*() {
    const store = yield* MediaStore
    const filesBefore = yield* store.files
    const rowsBefore = yield* store.rows(store.conversationId)
    const error = yield* Effect.flip(attempt).pipe(Effect.orDieWith(() => new Error(`expected a ${rule} refusal, the fetch passed`)))
    expect(error._tag).toBe("MediaRefused")
    const refused = error as MediaRefused
    expect({ rule: refused.rule, message: refused.message }).toEqual({
      rule,
      message: expect.stringMatching(new RegExp(`\\(media policy rule: ${rule}\\)$`))
    })
    expect(yield* store.files).toEqual(filesBefore)
    expect((yield* store.rows(store.conversationId)).length).toBe(rowsBefore.length)
    return refused
  })
