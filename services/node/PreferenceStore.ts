/** The person's preferences, with one step of undo per preference. */
import { Context, type Effect, type Option } from "effect"

export interface PreferenceState {
  /** The stored JSON value; null when the preference is unset or was set to null. */
  readonly value: unknown
  readonly updatedAt: string
}

/** How long after a write its undo is offered. */
export const undoWindowMillis = 5 * 60 * 1000

export type UndoOutcome =
  | { readonly undone: true; readonly state: PreferenceState }
  | { readonly undone: false; readonly reason: string; readonly state: PreferenceState }

export class PreferenceStore extends Context.Tag("clark/node/PreferenceStore")<PreferenceStore, {
  readonly get: (key: string) => Effect.Effect<Option.Option<PreferenceState>>
  /** Stores the value (already checked by the caller) and remembers the previous one for undo. */
  readonly set: (key: string, value: unknown) => Effect.Effect<PreferenceState>
  /**
   * Puts back the value before the last write, when that write is at most
   * `undoWindowMillis` old (by `Clock`) and has not been undone; an undo is
   * itself not undoable.
   */
  readonly undo: (key: string) => Effect.Effect<UndoOutcome>
}>() {}
