/**
 * The widget instance store on a real SQLite file: an instance is found only in its own conversation, its
 * bindings carry digests bound to the package content, the revision moves by one, a view-state write lands only
 * with a newer sequence, and everything is there again after the database is opened anew.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import * as SqlWidgetInstances from "../../../layers/node/sql/SqlWidgetInstances.js"
import * as SqlWidgetPressLog from "../../../layers/node/sql/SqlWidgetPressLog.js"
import { bindingDigest, type NewInstance, WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { WidgetPressLog } from "../../../services/node/WidgetPressLog.js"
import * as NodeServer from "../../support/NodeServer.js"

const store = (dataDir: string) => SqlWidgetInstances.layer.pipe(Layer.provide(NodeDatabase.layer(dataDir)))
const withLog = (dataDir: string) =>
  Layer.merge(SqlWidgetInstances.layer, SqlWidgetPressLog.layer).pipe(Layer.provide(NodeDatabase.layer(dataDir)))

const tide: NewInstance = {
  conversationId: "c_one",
  packageId: "@clark-examples/tide-widget",
  version: "1.0.0",
  contentDigest: "sha256:aaaa",
  widgetId: "tide-table",
  props: { harbour: "Kiel" },
  bindings: [
    { id: "refresh", kind: "tool", tool: "tide_table", perMinute: 6 },
    { id: "ask-low-tide", kind: "agent", instruction: "Tell the tide.", perMinute: 2 }
  ],
  offeredActions: ["show-day"],
  taskId: "task_1"
}

describe("widget instances", () => {
  it.scoped("places an instance at revision 1 with binding digests, found only in its own conversation", () =>
    Effect.gen(function*() {
      const instances = yield* WidgetInstances
      const placed = yield* instances.place(tide)
      expect(placed.revision).toBe(1)
      expect(placed.instanceId).toMatch(/^wgt_/)
      expect(placed.bindings.map((b) => b.digest)).toEqual([
        bindingDigest(tide.packageId, tide.contentDigest, tide.widgetId, tide.bindings[0]!),
        bindingDigest(tide.packageId, tide.contentDigest, tide.widgetId, tide.bindings[1]!)
      ])
      expect(Option.getOrThrow(yield* instances.get("c_one", placed.instanceId))).toEqual(placed)
      expect(yield* instances.get("c_two", placed.instanceId)).toEqual(Option.none())
      expect(yield* instances.get("c_one", "wgt_missing")).toEqual(Option.none())
      expect((yield* instances.list("c_one")).map((i) => i.instanceId)).toEqual([placed.instanceId])
    }).pipe(Effect.provide(store(NodeServer.makeDataDir()))))

  it("a binding's digest changes with the package content, the widget or the binding", () => {
    const binding = tide.bindings[0]!
    const base = bindingDigest(tide.packageId, "sha256:aaaa", "tide-table", binding)
    expect(bindingDigest(tide.packageId, "sha256:bbbb", "tide-table", binding)).not.toBe(base)
    expect(bindingDigest(tide.packageId, "sha256:aaaa", "other", binding)).not.toBe(base)
    expect(bindingDigest(tide.packageId, "sha256:aaaa", "tide-table", { ...binding, perMinute: 7 })).not.toBe(base)
    expect(bindingDigest(tide.packageId, "sha256:aaaa", "tide-table", binding)).toBe(base)
  })

  it.scoped("moves the revision by one, keeps view state apart, and keeps both across a reopening", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const placed = yield* Effect.provide(
        Effect.gen(function*() {
          const instances = yield* WidgetInstances
          const placed = yield* instances.place(tide)
          expect(yield* instances.advance("c_one", placed.instanceId)).toBe(2)
          expect(yield* instances.advance("c_two", placed.instanceId)).toBe(0)
          expect(yield* instances.viewState("c_one", placed.instanceId)).toEqual(Option.none())
          const first = yield* instances.writeViewState("c_one", placed.instanceId, {
            sequence: 2,
            invocationId: "i-2",
            state: { positionMs: 10 }
          })
          expect(first).toEqual({
            _tag: "Written",
            current: { sequence: 2, invocationId: "i-2", stateRevision: 1, state: { positionMs: 10 } }
          })
          const older = yield* instances.writeViewState("c_one", placed.instanceId, {
            sequence: 2,
            invocationId: "i-3",
            state: { positionMs: 99 }
          })
          expect(older).toEqual({ _tag: "NotNewer", current: first.current })
          return placed
        }),
        store(dataDir)
      )
      yield* Effect.provide(
        Effect.gen(function*() {
          const instances = yield* WidgetInstances
          expect(Option.getOrThrow(yield* instances.get("c_one", placed.instanceId)).revision).toBe(2)
          expect(Option.getOrThrow(yield* instances.viewState("c_one", placed.instanceId))).toMatchObject({
            sequence: 2,
            state: { positionMs: 10 }
          })
        }),
        store(dataDir)
      )
    }))

  it.scoped("a press's read: the instance as it is now and the earlier press of the invocation id, in its conversation only", () =>
    Effect.gen(function*() {
      const instances = yield* WidgetInstances
      const log = yield* WidgetPressLog
      const placed = yield* instances.place(tide)
      const first = Option.getOrThrow(yield* instances.forPress("c_one", placed.instanceId, "inv-1"))
      expect(first).toEqual({ instance: placed, earlier: Option.none() })
      expect(yield* instances.forPress("c_two", placed.instanceId, "inv-1")).toEqual(Option.none())
      expect(yield* instances.forPress("c_one", "wgt_missing", "inv-1")).toEqual(Option.none())
      yield* log.claim({ conversationId: "c_one", instanceId: placed.instanceId, invocationId: "inv-1", actionBindingId: "refresh" })
      // The revision is read anew each time (the rest of the row was decoded once, at the first read).
      expect(yield* instances.advance("c_one", placed.instanceId)).toBe(2)
      const running = Option.getOrThrow(yield* instances.forPress("c_one", placed.instanceId, "inv-1"))
      expect(running.instance).toEqual({ ...placed, revision: 2 })
      expect(running.earlier).toEqual(Option.some({ status: "running" }))
      const body = { outcome: "done", invocationId: "inv-1", instanceId: placed.instanceId, revision: 2 }
      yield* log.answer(placed.instanceId, "inv-1", { _tag: "Success", status: 200, body })
      const answered = Option.getOrThrow(yield* instances.forPress("c_one", placed.instanceId, "inv-1"))
      expect(answered.earlier).toEqual(Option.some({ status: "answered", answer: { _tag: "Success", status: 200, body } }))
      expect(yield* log.get(placed.instanceId, "inv-1")).toEqual(answered.earlier)
      expect(Option.getOrThrow(yield* instances.forPress("c_one", placed.instanceId, "inv-2")).earlier).toEqual(Option.none())
    }).pipe(Effect.provide(withLog(NodeServer.makeDataDir()))))
})
