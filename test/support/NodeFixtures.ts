/** Helpers shared by the node's HTTP tests. */
import { Effect } from "effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { NodeApi } from "../../schema/node/Api.js"
import type { MessageRequest } from "../../schema/node/Conversation.js"
import type { NodeError } from "../../schema/node/Errors.js"
import { type As, type SseEvent, TestNode } from "./NodeServer.js"

/** Waits on real time: the server runs on the test clock, but its own work needs real time to happen. */
export const pause = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/** Repeats `effect` on real time until `holds`, or dies naming `what`. */
export const eventually = <A, R>(
  effect: Effect.Effect<A, never, R>,
  holds: (a: A) => boolean,
  what: string,
  tries = 300
) =>
  Effect.gen(function*() {
    let last: A | undefined
    for (let i = 0; i < tries; i++) {
      last = yield* effect
      if (holds(last)) return last
      yield* pause(10)
    }
    return yield* Effect.dieMessage(`${what} never held; last: ${JSON.stringify(last)}`)
  })

/** The typed client of the node's contract, as `as` calls it: JSON routes go through it, raw fetch only where bytes,
 * headers or SSE framing are the point. */
export const typedClient = (as: As = "person") =>
  Effect.flatMap(TestNode, (node) =>
    HttpApiClient.make(NodeApi, {
      baseUrl: node.baseUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.setHeaders(node.headers(as)))
    })).pipe(Effect.provide(FetchHttpClient.layer))

/**
 * A typed call (made `withResponse: true`) as status and body. A refusal is decoded by the schema its route
 * declares for that status, then laid out as on the wire, so a test reads codes and members as a client sees them.
 */
export const wire = <A, E extends { readonly _tag: string }, R>(
  call: Effect.Effect<readonly [A, HttpClientResponse.HttpClientResponse], E | NodeError, R>
): Effect.Effect<{ readonly status: number; readonly body: any }, Exclude<E, NodeError>, R> =>
  call.pipe(
    Effect.map(([body, response]) => ({ status: response.status, body })),
    Effect.catchIf(
      (error): error is NodeError => error._tag === "NodeError",
      (error) => Effect.succeed({ status: error.status, body: { ...error.members, code: error.code, message: error.message } })
    )
  ) as any

/** The waiting route through the typed client; the status tells an answer (200) from a background one (202). */
export const send = (id: string, payload: typeof MessageRequest.Encoded, as: As = "person") =>
  Effect.flatMap(typedClient(as), (client) =>
    client.conversations.send({ path: { id }, payload, withResponse: true })).pipe(
      Effect.map(([body, response]) => ({ status: response.status, body }))
    )

export const conversation = Effect.gen(function*() {
  const client = yield* typedClient()
  const created = yield* Effect.orDie(client.conversations.create({ payload: {} }))
  return created.conversationId
})

/** The conversation's entries; `any`, since tests read blocks of every kind without narrowing them first. */
export const timeline = (id: string) =>
  Effect.flatMap(typedClient(), (client) =>
    Effect.orDie(client.conversations.timeline({ path: { id }, urlParams: {} }))).pipe(
      Effect.map((timeline) => timeline.entries as Array<any>)
    )

export const textOf = (entry: any): string =>
  entry.blocks.filter((b: any) => b.type === "text").map((b: any) => b.text).join("")

export const hasEvent = (name: string) => (events: ReadonlyArray<SseEvent>) => events.some((e) => e.event === name)

export const doneOf = (events: ReadonlyArray<SseEvent>) => events.find((e) => e.event === "done")!.data

export interface SqliteDatabase {
  prepare(sql: string): { all(...params: Array<unknown>): Array<any>; run(...params: Array<unknown>): unknown }
  close(): void
}

const loadCjs = createRequire(import.meta.url)
export const Database = loadCjs("better-sqlite3") as new(
  file: string,
  options?: { readonly readonly?: boolean }
) => SqliteDatabase

/** Reads a SQLite file directly, read-only, on a connection of its own: what is committed. */
export const queryFile = (file: string, sql: string, ...params: Array<unknown>): Array<any> => {
  const db = new Database(file, { readonly: true })
  try {
    return db.prepare(sql).all(...params)
  } finally {
    db.close()
  }
}

/** Reads the node's database file directly, read-only. */
export const query = (dataDir: string, sql: string, ...params: Array<unknown>): Array<any> =>
  queryFile(path.join(dataDir, "node.db"), sql, ...params)
