/**
 * The checks of a widget's instance as it is now, made before a press claims its invocation id and none of which
 * changes anything but the binding's rate window: the package still installed as placed, the revision and binding
 * digest the widget saw, the binding's presses per minute; and rules 8 and 9, a host-held player's view state,
 * answered from these checks alone (no timeline entry, the instance revision unchanged).
 */
import { Clock, Effect, Either, HashMap, Option, ParseResult, Ref, Schema } from "effect"
import { type ActionPress, viewStateVariant } from "../../../schema/node/Widget.js"
import { admit, notNewer, pastClockBound, PlayerState, type Window } from "../../../services/node/PressRules.js"
import { PressInputInvalid, PressRateLimited, WidgetNotInstalled } from "../../../services/node/WidgetErrors.js"
import { hostPackageId, type WidgetBinding, type WidgetInstance, WidgetInstances } from "../../../services/node/WidgetInstances.js"
import * as InstalledCache from "./InstalledCache.js"

export const make = Effect.gen(function*() {
  const instances = yield* WidgetInstances
  const installedRecord = yield* InstalledCache.make
  const windows = yield* Ref.make(HashMap.empty<string, Window>())

  const rate = Effect.fnUntraced(function*(instance: WidgetInstance, binding: WidgetBinding) {
    const now = yield* Clock.currentTimeMillis
    const key = `${instance.instanceId}\u0000${binding.id}`
    const admission = yield* Ref.modify(windows, (map) => {
      const result = admit(Option.getOrElse(HashMap.get(map, key), () => []), now, binding.perMinute)
      return [result, HashMap.set(map, key, result.window)]
    })
    if (!admission.admitted) {
      return yield* new PressRateLimited({
        actionBindingId: binding.id,
        limit: binding.perMinute,
        retryAfterMs: admission.retryAfterMs
      })
    }
  })

  /** The package is still installed as the widget was placed from (a reinstall of that listing brings it back). */
  const installed = Effect.fnUntraced(function*(instance: WidgetInstance) {
    if (instance.packageId === hostPackageId) return undefined
    const pkg = yield* installedRecord(instance.packageId)
    if (Option.isNone(pkg) || pkg.value.contentDigest !== instance.contentDigest || pkg.value.version !== instance.version) {
      return yield* new WidgetNotInstalled({ packageId: instance.packageId })
    }
    return pkg.value
  })

  const current = Effect.fnUntraced(function*(instance: WidgetInstance, binding: WidgetBinding, press: ActionPress) {
    if (press.expectedRevision !== instance.revision) {
      return yield* new PressInputInvalid({ field: "expectedRevision", reason: "stale-revision" })
    }
    if (press.expectedBindingDigest !== binding.digest) {
      return yield* new PressInputInvalid({ field: "expectedBindingDigest", reason: "binding-digest-mismatch" })
    }
  })

  /** Rules 8 and 9: a host-held player's state; no timeline, the instance revision unchanged. */
  const viewState = Effect.fnUntraced(function*(instance: WidgetInstance, binding: WidgetBinding, press: ActionPress, sequence: number) {
    const answer = (current: { readonly stateRevision: number; readonly state: unknown }, duplicate: boolean, stale: boolean) => ({
      variant: viewStateVariant as typeof viewStateVariant,
      duplicate,
      ...(stale ? { stale: true as const } : {}),
      instanceId: instance.instanceId,
      revision: instance.revision,
      stateRevision: current.stateRevision,
      state: current.state
    })
    const held = yield* instances.viewState(instance.conversationId, instance.instanceId)
    const write = { sequence, invocationId: press.invocationId }
    const duplicate = Option.isSome(held) ? notNewer(held.value, write) : undefined
    if (Option.isSome(held) && duplicate !== undefined) return answer(held.value, true, duplicate.stale)
    yield* installed(instance)
    yield* current(instance, binding, press)
    const state = Schema.decodeUnknownEither(PlayerState)(press.input)
    if (Either.isLeft(state)) {
      return yield* new PressInputInvalid({
        field: "input",
        reason: "input",
        problem: ParseResult.TreeFormatter.formatErrorSync(state.left)
      })
    }
    if (pastClockBound(state.right, yield* Clock.currentTimeMillis)) {
      return yield* new PressInputInvalid({ field: "input.at", reason: "clock-bound" })
    }
    yield* rate(instance, binding)
    const written = yield* instances.writeViewState(instance.conversationId, instance.instanceId, {
      ...write,
      state: state.right
    })
    if (written._tag === "Written") return answer(written.current, false, false)
    // Another write took this sequence between the read and this one: answered as rule 9 says.
    return answer(written.current, true, written.current.invocationId !== press.invocationId)
  })

  return { current, installed, rate, viewState }
})
