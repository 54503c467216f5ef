/** What the offered-action and job-approval tests share: the script, the app's side of a request, deciding cards. */
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import * as NodeServer from "../../support/NodeServer.js"
import type { As } from "../../support/NodeServer.js"
import { conversation, eventually, query, send, typedClient, wire } from "../../support/NodeFixtures.js"
import { setPreference } from "../tools/Fixtures.js"
import { install, place, script, widgetProbe } from "./Fixtures.js"

export const offerScript: ScriptInput = {
  rules: [
    ...(script.rules ?? []),
    { match: "^perform", steps: [{ toolFromText: "perform_widget_action" }], after: [{ delta: "Asked the widget." }] },
    {
      match: "^place tide",
      steps: [{ tool: { name: "place_widget", input: { package: "@clark-examples/tide-widget", widget: "tide-table", props: { harbour: "Brest" } } } }],
      after: [{ delta: "Placed." }]
    }
  ]
}

/** A copy of the example tide widget (its `show-day` is its one offered action). */
export const tideWidget = () => {
  const target = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clark-tide-")), "tide-widget")
  fs.cpSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "../../../examples/packages/tide-widget"), target, { recursive: true })
  return target
}

export const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ script: offerScript }))

export const setup = Effect.gen(function*() {
  yield* install(widgetProbe())
  const id = yield* conversation
  const placed = yield* place(id)
  return { id, instanceId: placed.instanceId as string }
})

/** A turn asking for the action; answers the tool's output (what the model read). */
export const perform = (id: string, body: unknown, as: As = "person") =>
  Effect.map(send(id, { text: `perform ${JSON.stringify(body)}` }, as), (response): any => {
    const reply: any = response.body.timeline.entries.find((e: any) => e.role === "assistant")
    return reply.blocks.find((b: any) => b.type === "tool" && b.name === "perform_widget_action").output
  })

export const waitingRequests = (id: string, instanceId: string) =>
  Effect.flatMap(typedClient(), (client) => Effect.orDie(client.offeredActions.waiting({ path: { id, instanceId } })))

export const report = (id: string, instanceId: string, requestId: string, payload: any) =>
  Effect.flatMap(typedClient(), (client) =>
    Effect.orDie(wire(client.offeredActions.report({ path: { id, instanceId, requestId }, payload, withResponse: true }))))

export const decide = (taskId: string, approvalId: string, payload: any) =>
  Effect.flatMap(typedClient(), (client) =>
    Effect.orDie(wire(client.work.decideTaskApproval({ path: { taskId, approvalId }, payload, withResponse: true }))))

/** Performs as the person while playing the app: the request is read, then `answer` is reported. */
export const performAnswered = (id: string, instanceId: string, body: unknown, answer: any) =>
  Effect.gen(function*() {
    const turn = yield* Effect.fork(perform(id, body))
    const [request] = yield* eventually(waitingRequests(id, instanceId), (r) => r.requests.length === 1, "the request reaches the app")
      .pipe(Effect.map((r) => r.requests))
    const reported = yield* report(id, instanceId, request!.requestId, answer)
    const output = yield* Fiber.join(turn)
    return { request: request!, reported, output }
  })

export const askMode = setPreference("execution.machineTurns", "ask")

/** The task of the turn whose card this is (the decide route's path). */
export const taskOf = (dataDir: string, approvalId: string) =>
  query(dataDir, "SELECT task_id FROM task_approvals WHERE id = ?", approvalId)[0].task_id as string

