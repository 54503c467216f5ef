/**
 * A property of POST …/actions on the real node: payloads drawn from the contract's own schema (ActionPress,
 * through Effect's Arbitrary), some aimed at the placed widget's real bindings (those whose services answer),
 * digests and revision, some wrongly typed or shaped JSON, never get a 5xx, and every refusal is `{code, message}` with the status its code has.
 * Nothing refused leaves an effect in the ledger.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect } from "effect"
import * as fc from "fast-check"
import { statusOfCode } from "../../../schema/node/Errors.js"
import { ActionPress } from "../../../schema/node/Widget.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation } from "../../support/NodeFixtures.js"
import { install, ledgerRows, place, script, widgetProbe } from "./Fixtures.js"

const samples = Number(process.env.WIDGET_PROPERTY_RUNS ?? 60)

/** Press payloads from the contract, steered half the time towards what the widget really has. */
const payloads = (placed: any) => {
  const fromContract = Arbitrary.make(ActionPress)
  // The bindings whose calls answer: `crash` and `fail` answer the spec's 502 by design (Presses.test.ts).
  const binding = fc.constantFrom(...placed.bindings.filter((b: any) => ["read", "write", "ask"].includes(b.id)))
  const aimed = fc.record({
    press: fromContract,
    binding,
    // Resolved when sent: the instance's revision then (it moves with every press that ran), or a stale one.
    revision: fc.constantFrom("current", "current", "stale"),
    digestOf: fc.boolean(),
    shaped: fc.constantFrom("plain", "plain", "plain", "variant", "other"),
    sequence: fc.option(fc.integer({ min: -2, max: 5 }), { nil: undefined }),
    input: fc.oneof(fc.jsonValue(), fc.constant({ key: "k", value: "v" }), fc.constant({ key: "k" }), fc.constant({}))
  }).map(({ binding, digestOf, input, press, revision, sequence, shaped }) => {
    const { sequence: _s, variant: _v, ...rest } = press
    return {
      ...rest,
      actionBindingId: binding.id,
      expectedRevision: revision,
      expectedBindingDigest: digestOf ? binding.digest : press.expectedBindingDigest,
      input,
      ...(shaped === "variant" ? { variant: "view-state" } : shaped === "other" ? { variant: "seek" } : {}),
      ...(shaped === "plain" || sequence === undefined ? {} : { sequence })
    }
  })
  const wrong = fc.oneof(
    fc.jsonValue(),
    fc.record({
      actionBindingId: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
      expectedRevision: fc.oneof(fc.integer(), fc.double(), fc.string()),
      expectedBindingDigest: fc.oneof(fc.string({ maxLength: 300 }), fc.constant(null)),
      input: fc.jsonValue(),
      invocationId: fc.oneof(fc.string({ maxLength: 300 }), fc.constant("view-state:x"), fc.integer()),
      variant: fc.oneof(fc.string(), fc.integer()),
      sequence: fc.oneof(fc.integer(), fc.double(), fc.string())
    }, { requiredKeys: [] })
  )
  return fc.oneof({ arbitrary: fromContract, weight: 1 }, { arbitrary: aimed, weight: 3 }, { arbitrary: wrong, weight: 1 })
}

describe("press payloads (property)", () => {
  it.scoped("never answer a 5xx; every refusal is in the envelope with its code's status", () =>
    Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(widgetProbe())
      const id = yield* conversation
      const placed = yield* place(id)
      const route = `/conversations/${id}/widgets/${placed.instanceId}/actions`
      const seen = new Map<number, number>()
      let revision = placed.revision as number
      for (const drawn of fc.sample(payloads(placed), { numRuns: samples, seed: 1515 })) {
        const payload = typeof drawn === "object" && drawn !== null && "expectedRevision" in drawn &&
            typeof drawn.expectedRevision === "string" && ["current", "stale"].includes(drawn.expectedRevision)
          ? { ...drawn, expectedRevision: drawn.expectedRevision === "current" ? revision : revision + 7 }
          : drawn
        const { body, status } = yield* node.request("POST", route, { body: payload })
        if (status === 200 && typeof body.revision === "number" && body.variant === undefined) revision = body.revision
        seen.set(status, (seen.get(status) ?? 0) + 1)
        expect({ payload, status }).toEqual({ payload, status: expect.any(Number) })
        expect(status).toBeLessThan(500)
        if (status >= 400) {
          expect(body).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }))
          expect(statusOfCode[body.code as keyof typeof statusOfCode]).toBe(status)
        } else {
          expect([200, 202]).toContain(status)
        }
      }
      // The property saw both answers and refusals, not only one kind.
      expect([...seen.keys()].some((s) => s < 300)).toBe(true)
      expect([...seen.keys()].some((s) => s >= 400)).toBe(true)
      // Refusals changed nothing: the only effects are of presses that ran.
      for (const row of ledgerRows(node.dataDir)) expect(row.status).not.toBe("sent")
    }).pipe(Effect.provide(NodeServer.layer({ script }))), { timeout: 180_000 })
})
