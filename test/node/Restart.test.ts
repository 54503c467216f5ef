/**
 * What survives the node stopping: a graceful shutdown (scope closed) and a
 * crash (the real CLI killed with SIGKILL), each followed by a new node on the
 * same data dir; and the error envelope of the node (unknown routes, decoding
 * failures, malformed JSON, unexpected failures).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import type { ScriptInput } from "../../layers/node/model/Scripted.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"
import { conversation, eventually, send, textOf, timeline, typedClient } from "../support/NodeFixtures.js"
import { exited, spawnNode } from "../support/NodeProcess.js"

const script: ScriptInput = {
  rules: [
    { match: "^forever", steps: [{ delta: "start " }, { delay: 3_600_000 }, { delta: "never" }] },
    {
      match: "colour",
      steps: [{ question: { question: "Which colour?", options: [{ id: "r", label: "Red" }, { id: "b", label: "Blue" }] } }]
    }
  ]
}

// ---------------------------------------------------------------------------
// Helpers

interface SqliteDatabase {
  prepare(sql: string): { all(...params: Array<unknown>): Array<any>; run(...params: Array<unknown>): unknown }
  close(): void
}
const loadCjs = createRequire(import.meta.url)
const Database = loadCjs("better-sqlite3") as new(file: string, options?: { readonly readonly?: boolean }) => SqliteDatabase






const identityFile = (dataDir: string) => path.join(dataDir, "identity.json")


// ---------------------------------------------------------------------------

describe("graceful shutdown", () => {
  it.scoped("keeps finished messages, stops the reply being written and cancels the waiting message", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()

      // The streaming client and the waiting request outlive the node (they belong to the test's scope).
      const first = yield* Effect.gen(function*() {
        const node = yield* TestNode
        const id = yield* conversation
        const identity = fs.readFileSync(identityFile(dataDir), "utf8")
        const client = yield* typedClient()
        const info = yield* client.conversations.node()

        const done = yield* send(id, { text: "hello" })
        expect(done.status).toBe(200)
        expect(done.body.resolution).toBe("answered")

        const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "forever and ever" })
        yield* stream.until((events) => events.some((e) => e.event === "delta"))

        // Another surface's message never steers into the person's turn: it waits behind it.
        const waiting = yield* Effect.forkDaemon(
          send(id, { text: "queued from a script" }, "cli-api")
        )
        yield* eventually(
          timeline(id),
          (entries) => entries.some((e) => e.role === "user" && e.status === "waiting"),
          "the script's message waits"
        )
        return { id, identity, nodeId: info.nodeId, token: node.token, stream, waiting }
      }).pipe(Effect.provide(NodeServer.layer({ script, dataDir })))

      // Shutdown answered both clients: the stream ends with `done` (stopped), the waiting request with cancelled.
      const events = yield* first.stream.ended
      expect(events.map((e) => e.event)).toEqual(["delta", "done"])
      expect(events[1]!.data.resolution).toBe("stopped")
      const waited = yield* Fiber.join(first.waiting)
      expect(waited.status).toBe(200)
      expect(waited.body.resolution).toBe("cancelled")

      // The node is gone; a new one starts on the same data dir.
      yield* Effect.gen(function*() {
        const node = yield* TestNode
        expect(fs.readFileSync(identityFile(dataDir), "utf8")).toBe(first.identity)
        expect(fs.statSync(identityFile(dataDir)).mode & 0o777).toBe(0o600)
        expect(node.token).toBe(first.token)
        const client = yield* typedClient()
        expect((yield* client.conversations.node()).nodeId).toBe(first.nodeId)

        const entries = yield* timeline(first.id)
        expect(entries.map((e) => [e.role, e.status])).toEqual([
          ["user", "complete"],
          ["assistant", "complete"],
          ["user", "complete"],
          ["assistant", "stopped"],
          ["user", "complete"],
          ["assistant", "cancelled"]
        ])
        const [hello, answer, forever, stopped, queued, cancelled] = entries
        expect(textOf(hello)).toBe("hello")
        expect(textOf(answer)).toBe("You said: hello")
        expect(answer.note).toBeNull()
        expect(textOf(forever)).toBe("forever and ever")
        expect(forever.origin).toBe("person")

        expect(textOf(stopped)).toBe("start ")
        expect(stopped.note).toEqual(expect.stringMatching(/shut down/i))

        expect(textOf(queued)).toBe("queued from a script")
        expect(queued.origin).toBe("cli-api")
        expect(cancelled.blocks).toEqual([])
        expect(cancelled.note).toEqual(expect.stringMatching(/before it started/i))

        // Nothing is left running or waiting, and the conversation takes new messages.
        const list = yield* client.conversations.list()
        expect(list.conversations).toMatchObject([{ conversationId: first.id, running: false }])
        const next = yield* send(first.id, { text: "again" })
        expect(next.status).toBe(200)
        expect(next.body.resolution).toBe("answered")
      }).pipe(Effect.provide(NodeServer.layer({ script, dataDir })))
    }))
})

describe("questions across a restart", () => {
  it.scoped("an open question can still be answered after a restart, and another one still expires on time", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const questionTtl = Duration.minutes(10)
      const layer = () => NodeServer.layer({ script, dataDir, turns: { questionTtl } })
      const ask = (id: string) =>
        Effect.gen(function*() {
          const response = yield* send(id, { text: "a colour" })
          expect(response.status).toBe(200)
          const reply: any = response.body.timeline.entries.find((e) => e.role === "assistant")
          return reply.blocks.find((b: any) => b.type === "question").questionId as string
        })
      const first = yield* Effect.gen(function*() {
        const id = yield* conversation
        const other = yield* conversation
        return { id, other, answered: yield* ask(id), expiring: yield* ask(other) }
      }).pipe(Effect.provide(layer()))

      yield* Effect.gen(function*() {
        const client = yield* typedClient()
        const answered = yield* client.questions.answer({
          path: { id: first.id, questionId: first.answered },
          payload: { optionIds: ["b"] }
        })
        expect(answered).toMatchObject({ questionId: first.answered, status: "answered" })
        const entries = yield* eventually(
          timeline(first.id),
          (entries) => entries.some((e) => e.role === "assistant" && textOf(e) === "You said: Blue" && e.status === "complete"),
          "the answer's turn completes"
        )
        expect(entries.find((e) => e.role === "user" && textOf(e) === "Blue")).toBeDefined()

        const statusOf = (id: string, questionId: string) =>
          Effect.map(timeline(id), (entries) =>
            entries.flatMap((e) => e.blocks).find((b: any) => b.type === "question" && b.questionId === questionId)?.status)
        expect(yield* statusOf(first.other, first.expiring)).toBe("open")
        const expired = yield* eventually(
          Effect.zipRight(TestClock.adjust(questionTtl), statusOf(first.other, first.expiring)),
          (status) => status === "expired",
          "the question expires after the restart",
          20
        )
        expect(expired).toBe("expired")
        const db = new Database(path.join(dataDir, "node.db"), { readonly: true })
        try {
          expect(db.prepare("SELECT kind FROM notices WHERE subject_id = ?").all(first.expiring)).toEqual([
            { kind: "question-expired" }
          ])
          expect(db.prepare("SELECT * FROM notices WHERE subject_id = ?").all(first.answered)).toEqual([])
        } finally {
          db.close()
        }
      }).pipe(Effect.provide(layer()))
    }))
})

describe("crash", () => {
  it.scoped("a reply cut off by SIGKILL is stopped with its checkpointed text kept when the node starts again", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const { baseUrl, child, headers } = yield* spawnNode({ dataDir, script, appSecret: "crash-test-app-secret" })

      const created = yield* Effect.promise(() =>
        fetch(`${baseUrl}/conversations`, { method: "POST", headers, body: "{}" }).then((r) => r.json() as Promise<any>)
      )
      const id = created.conversationId as string
      expect(id).toEqual(expect.any(String))

      // Stream the message and kill the node as soon as the first delta has arrived.
      const controller = new AbortController()
      const received = yield* Effect.promise(async () => {
        const response = await fetch(`${baseUrl}/conversations/${id}/messages/stream`, {
          method: "POST",
          headers,
          body: JSON.stringify({ text: "forever and ever", clientRequestId: "crash-retry-1" }),
          signal: controller.signal
        })
        const reader = response.body!.getReader()
        const decoder = new TextDecoder()
        let text = ""
        while (!text.includes("event: delta")) {
          const { done, value } = await reader.read()
          if (done) break
          text += decoder.decode(value, { stream: true })
        }
        return text
      })
      expect(received).toContain("event: delta")
      expect(received).toContain(`data: {"text":"start "}`)
      // A running reply reaches the store at its next checkpoint (at most 250 ms later); then the crash.
      yield* eventually(
        Effect.promise(() =>
          fetch(`${baseUrl}/conversations/${id}/timeline`, { headers }).then((r) => r.json() as Promise<any>)
        ),
        (body) => body.entries?.some((e: any) => e.role === "assistant" && textOf(e) === "start ") === true,
        "the reply's first text is stored"
      )
      child.kill("SIGKILL")
      yield* Effect.promise(() => exited(child))
      controller.abort()
      expect(child.signalCode).toBe("SIGKILL")

      yield* Effect.gen(function*() {
        const entries = yield* timeline(id)
        expect(entries.map((e) => [e.role, e.status])).toEqual([["user", "complete"], ["assistant", "stopped"]])
        const [user, reply] = entries
        expect(textOf(user)).toBe("forever and ever")
        expect(textOf(reply)).toBe("start ")
        expect(reply.note).toEqual(expect.any(String))
        expect(reply.note.length).toBeGreaterThan(0)
        const node = yield* TestNode
        const client = yield* typedClient()
        const list = yield* client.conversations.list()
        expect(list.conversations).toMatchObject([{ conversationId: id, running: false }])

        // The cut-off turn's terminal event was stored at start-up: a resume and a retry both end with `done`.
        const taskId = /^id: (task_[^:\n]+):1$/m.exec(received)![1]!
        const resumed = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "ignored" }, {
          headers: { "last-event-id": `${taskId}:1` }
        })
        const after = yield* resumed.ended
        expect(after.map((e) => [e.id, e.event])).toEqual([[`${taskId}:2`, "done"]])
        expect(after[0]!.data).toMatchObject({ resolution: "stopped", taskId, messageIds: [user.messageId, reply.messageId] })
        const retried = yield* node.stream(`/conversations/${id}/messages/stream`, {
          text: "forever and ever",
          clientRequestId: "crash-retry-1"
        })
        const replayed = yield* retried.ended
        expect(replayed.map((e) => e.event)).toEqual(["delta", "done"])
        expect(replayed.at(-1)!.data.resolution).toBe("stopped")
        // Neither started a turn.
        expect(yield* timeline(id)).toHaveLength(2)
      }).pipe(Effect.provide(NodeServer.layer({ script, dataDir })))
    }), { timeout: 120_000 })
})

describe("the error envelope", () => {
  const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ script }))

  it.scoped("unknown routes are 404 RESOURCE_NOT_FOUND with {code, message}", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      for (const [method, route] of [
        ["GET", "/nope"],
        ["GET", "/conversations/conv_x"],
        ["POST", "/conversations/conv_x/unknown"],
        ["DELETE", "/conversations"],
        ["GET", "/api/v1/packages"]
      ] as const) {
        const response = yield* node.request(method, route)
        expect(response.status, `${method} ${route}`).toBe(404)
        expect(response.body, `${method} ${route}`).toEqual({ code: "RESOURCE_NOT_FOUND", message: expect.any(String) })
        expect(response.headers.get("content-type")).toMatch(/^application\/json/)
      }
    })))

  it.scoped("a message without text is 400 INVALID_INPUT naming the field, and nothing is stored", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      for (const route of [`/conversations/${id}/messages`, `/conversations/${id}/messages/stream`]) {
        const response = yield* node.request("POST", route, { body: { attachmentIds: [] } })
        expect(response.status, route).toBe(400)
        expect(response.body).toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("text") })
        expect(response.body.field).toBe("text")
      }
      expect(yield* timeline(id)).toEqual([])
    })))

  it.scoped("nine references are 400 INVALID_INPUT naming the field; eight are accepted", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const other = yield* conversation
      const refs = (n: number) => ({ version: 1, items: Array.from({ length: n }, () => ({ kind: "conversation", id: other })) })
      const nine = yield* node.request("POST", `/conversations/${id}/messages`, { body: { text: "see", references: refs(9) } })
      expect(nine.status).toBe(400)
      expect(nine.body).toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("references") })
      expect(String(nine.body.field)).toMatch(/^references/)
      expect(yield* timeline(id)).toEqual([])

      const eight = yield* node.request("POST", `/conversations/${id}/messages`, { body: { text: "see", references: refs(8) } })
      expect(eight.status).toBe(200)
      expect(eight.body.resolution).toBe("answered")
    })))

  it.scoped("malformed JSON is 400 INVALID_INPUT", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      for (const [route, body] of [
        [`/conversations/${id}/messages`, "{\"text\": \"hello\""],
        [`/conversations/${id}/messages`, "not json at all"],
        ["/conversations", "{,}"]
      ] as const) {
        const response = yield* Effect.promise(async () => {
          const r = await fetch(`${node.baseUrl}${route}`, {
            method: "POST",
            headers: { ...node.headers("person"), "content-type": "application/json" },
            body
          })
          return { status: r.status, body: await r.json() as any }
        })
        expect(response.status, `${route} ${body}`).toBe(400)
        expect(response.body).toMatchObject({ code: "INVALID_INPUT", message: expect.any(String) })
      }
      expect(yield* timeline(id)).toEqual([])
    })))

  it.scoped("a 500 carries {code, message} and never a stack or internals", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* conversation
      // Break the database under the running node, so its next read fails unexpectedly.
      const db = new Database(path.join(node.dataDir, "node.db"))
      try {
        db.prepare("ALTER TABLE conversations RENAME TO conversations_moved_away").run()
      } finally {
        db.close()
      }
      const response = yield* Effect.promise(async () => {
        const r = await fetch(`${node.baseUrl}/conversations`, { headers: node.headers("person") })
        return { status: r.status, text: await r.text() }
      })
      expect(response.status).toBe(500)
      const body = JSON.parse(response.text)
      expect(body).toMatchObject({ code: expect.any(String), message: expect.any(String) })
      expect(body.code).toBe("INTERNAL")
      expect(body).not.toHaveProperty("stack")
      expect(body).not.toHaveProperty("cause")
      for (const leak of ["stack", "    at ", ".ts:", ".js:", "node_modules", "Sqlite", "conversations_moved_away", "no such table", node.dataDir]) {
        expect(response.text, leak).not.toContain(leak)
      }
    })))
})
