/**
 * The pure rules of a widget press (spec, "Widget action press"): the shape rules of rule 10, the per-minute
 * window of rule 3, and the view-state answers of rules 8 and 9. Table-tested in test/node/widgets/PressRules.test.ts.
 */
import { Schema } from "effect"
import { reservedInvocationPrefix, viewStateVariant } from "../../schema/node/Widget.js"
import type { PressSchemaInvalid } from "./WidgetErrors.js"

export interface PressShape {
  readonly invocationId: string
  readonly variant?: string | undefined
  readonly sequence?: number | undefined
}

/** Rule 10: what makes a press's shape invalid, checked before anything is looked up. */
export const shapeProblem = (press: PressShape): PressSchemaInvalid["reason"] | undefined => {
  if (press.invocationId.startsWith(reservedInvocationPrefix)) return "reserved-invocation-id"
  if (press.variant !== undefined && press.variant !== viewStateVariant) return "unknown-variant"
  if (press.variant === undefined && press.sequence !== undefined) return "sequence-without-variant"
  if (press.variant !== undefined && press.sequence === undefined) return "variant-without-sequence"
  return undefined
}

export const minuteMillis = 60_000

/** The admitted presses of one binding within the last minute, oldest first (millis). */
export type Window = ReadonlyArray<number>

export type Admission =
  | { readonly admitted: true; readonly window: Window }
  | { readonly admitted: false; readonly window: Window; readonly retryAfterMs: number }

/**
 * Rule 3, a sliding minute: a press is admitted while fewer than `perMinute` were admitted in the minute before
 * it; a refused one is not counted, and says when the oldest counted press leaves the minute.
 */
export const admit = (window: Window, now: number, perMinute: number): Admission => {
  const recent = window.filter((at) => at > now - minuteMillis)
  if (recent.length < perMinute) {
    // `recent` is this call's own array (made by `filter`): appended to, not copied again (up to 600 numbers a press).
    recent.push(now)
    return { admitted: true, window: recent }
  }
  return { admitted: false, window: recent, retryAfterMs: recent[0]! + minuteMillis - now }
}

/** A host-held player's playback state (canvas.video@1, canvas.audio@1): what a view-state write carries. */
export const PlayerState = Schema.Struct({
  positionMs: Schema.Int.pipe(Schema.nonNegative()),
  playing: Schema.Boolean,
  rate: Schema.optional(Schema.Number.pipe(Schema.between(0.25, 4))),
  volume: Schema.optional(Schema.Number.pipe(Schema.between(0, 1))),
  muted: Schema.optional(Schema.Boolean),
  /** When the player took this state (epoch millis); at most one day past the node's clock. */
  at: Schema.Int.pipe(Schema.nonNegative())
})
export type PlayerState = typeof PlayerState.Type

export const dayMillis = 24 * 60 * 60 * 1000

/** Rule 8's clock bound: a state more than one day past the node's clock is refused. */
export const pastClockBound = (state: PlayerState, now: number) => state.at > now + dayMillis

/**
 * Rule 9: a write not newer than the last accepted one writes nothing and is answered `duplicate`; a retry of
 * the latest write's own invocation is answered as is, any other also carries `stale`.
 */
export const notNewer = (
  held: { readonly sequence: number; readonly invocationId: string } | undefined,
  write: { readonly sequence: number; readonly invocationId: string }
): { readonly duplicate: true; readonly stale: boolean } | undefined =>
  held === undefined || write.sequence > held.sequence
    ? undefined
    : { duplicate: true, stale: write.invocationId !== held.invocationId }
