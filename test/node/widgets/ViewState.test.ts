/**
 * Press rules 8-10 on a host-held player (the video player placed by a turn), on the real node and the test
 * clock: view-state writes need a growing sequence, answer without a timeline entry and without moving the
 * instance revision, and are answered `duplicate` (and `stale`) when not newer.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, TestClock } from "effect"
import * as NodeServer from "../../support/NodeServer.js"
import { conversation, timeline, typedClient } from "../../support/NodeFixtures.js"
import { place, press, script } from "./Fixtures.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ script }))

const day = 24 * 60 * 60 * 1000

const setup = Effect.gen(function*() {
  const id = yield* conversation
  const placed = yield* place(id, "place video")
  const binding = placed.bindings[0]
  const write = (sequence: number | undefined, invocationId: string, state: unknown, extra: Record<string, unknown> = {}) =>
    press(id, placed.instanceId, {
      actionBindingId: binding.id,
      expectedRevision: placed.revision,
      expectedBindingDigest: binding.digest,
      input: state,
      invocationId,
      variant: "view-state",
      ...(sequence === undefined ? {} : { sequence }),
      ...extra
    })
  return { id, placed, write }
})

const state = (positionMs: number, at: number) => ({ positionMs, playing: true, at })

describe("view-state writes of a host-held player", () => {
  it.scoped("rule 8: a write answers its state and stateRevision; no timeline entry, the revision unchanged", () =>
    withNode(Effect.gen(function*() {
      const { id, placed, write } = yield* setup
      const now = yield* Clock.currentTimeMillis
      const before = (yield* timeline(id)).length
      const first = yield* write(1, "vs-1", state(1000, now))
      expect(first).toEqual({
        status: 200,
        body: {
          variant: "view-state",
          duplicate: false,
          instanceId: placed.instanceId,
          revision: 1,
          stateRevision: 1,
          state: state(1000, now)
        }
      })
      const second = yield* write(5, "vs-2", state(2000, now))
      expect(second.body).toMatchObject({ duplicate: false, revision: 1, stateRevision: 2, state: { positionMs: 2000 } })
      expect((yield* timeline(id)).length).toBe(before)
      const client = yield* typedClient()
      const view = yield* client.widgets.instance({ path: { id, instanceId: placed.instanceId } })
      expect(view).toMatchObject({ revision: 1, viewState: { sequence: 5, stateRevision: 2, state: { positionMs: 2000 } } })
    })))

  it.scoped("rule 9: not newer writes nothing; the latest write retried is a duplicate, any other also stale, before the revision check", () =>
    withNode(Effect.gen(function*() {
      const { write } = yield* setup
      const now = yield* Clock.currentTimeMillis
      yield* write(3, "vs-3", state(3000, now))
      const retried = yield* write(3, "vs-3", state(3000, now))
      expect(retried).toMatchObject({ status: 200, body: { duplicate: true, stateRevision: 1, state: { positionMs: 3000 } } })
      expect(retried.body.stale).toBeUndefined()
      const older = yield* write(2, "vs-2", state(9999, now), { expectedRevision: 42 })
      expect(older).toMatchObject({ status: 200, body: { duplicate: true, stale: true, stateRevision: 1, state: { positionMs: 3000 } } })
      const same = yield* write(3, "vs-other", state(9999, now))
      expect(same.body).toMatchObject({ duplicate: true, stale: true, state: { positionMs: 3000 } })
    })))

  it.scoped("rule 8: a state more than one day past the node's clock, or not a player state, is 400 INVALID_INPUT", () =>
    withNode(Effect.gen(function*() {
      const { write } = yield* setup
      yield* TestClock.adjust(Duration.days(400))
      const now = yield* Clock.currentTimeMillis
      const ahead = yield* write(1, "vs-a", state(0, now + day + 1))
      expect(ahead).toMatchObject({ status: 400, body: { code: "INVALID_INPUT", field: "input.at", reason: "clock-bound" } })
      const edge = yield* write(1, "vs-b", state(0, now + day))
      expect(edge.status).toBe(200)
      const shapeless = yield* write(2, "vs-c", { positionMs: -1, playing: "yes" })
      expect(shapeless).toMatchObject({ status: 400, body: { code: "INVALID_INPUT", field: "input" } })
    })))

  it.scoped("rules 8 and 10: the same revision and digest checks; the variant is needed on a player's binding", () =>
    withNode(Effect.gen(function*() {
      const { id, placed, write } = yield* setup
      const now = yield* Clock.currentTimeMillis
      expect((yield* write(1, "vs-r", state(0, now), { expectedRevision: 2 })).body).toMatchObject({
        code: "INVALID_INPUT",
        reason: "stale-revision"
      })
      expect((yield* write(1, "vs-d", state(0, now), { expectedBindingDigest: "sha256:other" })).body).toMatchObject({
        code: "INVALID_INPUT",
        reason: "binding-digest-mismatch"
      })
      expect((yield* write(undefined, "vs-n", state(0, now))).body).toMatchObject({ code: "INVALID_SCHEMA" })
      expect((yield* write(1, "view-state:1", state(0, now))).body).toMatchObject({ code: "INVALID_SCHEMA" })
      const plain = yield* press(id, placed.instanceId, {
        actionBindingId: "view-state",
        expectedRevision: 1,
        expectedBindingDigest: placed.bindings[0].digest,
        input: state(0, now),
        invocationId: "plain"
      })
      expect(plain).toMatchObject({ status: 400, body: { code: "UNSUPPORTED_ACTION", reason: "player-needs-variant" } })
    })))
})
