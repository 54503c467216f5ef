/**
 * The example service package (notes-service) used end to end by a turn of the OpenAI-compatible provider
 * (Chat Completions) against a local server that emits a tool call: the package's tools reach the provider's
 * request, the call runs over MCP in the package's own process, and its answer goes back to the model.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ServerResponse } from "node:http"
import * as path from "node:path"
import * as OpenAiChat from "../../../layers/node/model/OpenAiChat.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, send } from "../../support/NodeFixtures.js"
import { useRecordingServer } from "../../support/RecordingServer.js"
import { examplesFolder } from "../services/fixtures/Services.js"
import { install, ledgerRows } from "./Fixtures.js"

const upstream = useRecordingServer("/v1")

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "test-model",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }]
})

const sse = (res: ServerResponse, frames: ReadonlyArray<unknown>) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  for (const frame of frames) res.write(`data: ${typeof frame === "string" ? frame : JSON.stringify(frame)}\n\n`)
  res.end()
}

/** First a tool call to save a note; once the tool's answer is in the request, a closing sentence. */
const model = (res: ServerResponse) => {
  const request = upstream.received.at(-1)!.body
  const answered = request.messages.some((m: any) => m.role === "tool")
  if (answered) return sse(res, [chunk({ role: "assistant", content: "Saved it." }), chunk({}, "stop"), "[DONE]"])
  sse(res, [
    chunk({
      role: "assistant",
      tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "notes-service__save_note", arguments: "" } }]
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"title\":\"Groceries\"," } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: "\"text\":\"eggs, milk\"}" } }] }),
    chunk({}, "tool_calls"),
    "[DONE]"
  ])
}

describe("the OpenAI-compatible provider with an installed service package", () => {
  it.scoped("offers the package's tools, runs the emitted call over MCP, gives the answer back, and no secret to the model", () =>
    Effect.gen(function*() {
      upstream.reply = model
      yield* Effect.gen(function*() {
        const node = yield* TestNode
        const packageId = yield* install(path.join(examplesFolder, "notes-service"))
        // The package's own credential reaches only its service: never the model's requests.
        const secret = "sk-notes-4f1c9e7a-never-in-a-prompt"
        const stored = yield* node.request("POST", "/credentials", { body: { packageId, name: "api_token", value: secret } })
        expect(stored).toMatchObject({ status: 200, body: { stored: true } })
        const id = yield* conversation
        const { body, status } = yield* send(id, { text: "Keep a note: eggs and milk." })
        expect(status).toBe(200)

        // The provider was offered the package's tools, with their schemas; job tools are not offered in turns.
        const offered = upstream.received[0]!.body.tools.map((t: any) => t.function.name)
        expect(offered).toEqual(expect.arrayContaining(["notes-service__list_notes", "notes-service__save_note"]))
        expect(offered).not.toContain("notes-service__index_notes")
        const save = upstream.received[0]!.body.tools.find((t: any) => t.function.name === "notes-service__save_note")
        expect(save.function.parameters).toMatchObject({ required: ["title", "text"] })

        // The call ran in the package's process; its answer went back to the model as the tool message.
        const reply = body.timeline.entries.find((e: any) => e.role === "assistant")!
        expect(reply.blocks.find((b: any) => b.type === "tool")).toMatchObject({
          name: "notes-service__save_note",
          status: "done",
          packageId: "@clark-examples/notes-service",
          risk: "local-write",
          output: { text: "Saved \"Groceries\"." }
        })
        expect(reply.blocks.filter((b: any) => b.type === "text").map((b: any) => b.text).join("")).toBe("Saved it.")
        const second = upstream.received[1]!.body.messages
        expect(second.find((m: any) => m.role === "tool")).toMatchObject({ tool_call_id: "call_1" })
        expect(JSON.stringify(second.find((m: any) => m.role === "tool"))).toContain("Saved")
        // Nothing secret went to the model: not the package's credential, the node token or the app secret.
        const sent = JSON.stringify(upstream.received)
        expect(sent).not.toContain(secret)
        expect(sent).not.toContain(node.token)
        expect(sent).not.toContain(NodeServer.appSecret)
        // A local write is in the ledger, answered.
        expect(ledgerRows(node.dataDir)).toMatchObject([{ tool: "save_note", status: "answered" }])
      }).pipe(Effect.provide(NodeServer.layer({
        model: OpenAiChat.layer({ baseUrl: upstream.baseUrl, model: "test-model" })
      })))
    }))
})
