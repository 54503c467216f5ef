/**
 * Every press of a widget action, by its invocation id (spec, press rule 6): claimed before anything is sent, so
 * an invocation id is never sent twice; its answer stored, so a repeat gets the same answer, also after a
 * restart; a press still running when the node stopped is answered ACTION_INTERRUPTED from then on. Also holds
 * the newest semantic description each widget published (spec, "Widget semantic publishing before a press").
 */
import { Context, type Effect, type Option } from "effect"

/** A press's stored answer: a success as sent, or the refusal of its call (PressFailed's fields). */
export type StoredAnswer =
  | { readonly _tag: "Success"; readonly status: 200 | 202; readonly body: unknown }
  | { readonly _tag: "Refusal"; readonly refusal: unknown }

export type PressRecord =
  | { readonly status: "running" }
  | { readonly status: "interrupted" }
  | { readonly status: "answered"; readonly answer: StoredAnswer }

export interface SemanticDescription {
  readonly publishRevision: number
  readonly summary: string
  readonly selectedIds: ReadonlyArray<string>
  readonly values: Readonly<Record<string, unknown>> | null
  readonly publishedAt: string
}

export class WidgetPressLog extends Context.Tag("clark/node/WidgetPressLog")<WidgetPressLog, {
  /**
   * Claims the invocation id for this instance (one conditional insert): `none` when claimed now, the record
   * of the earlier press otherwise.
   */
  readonly claim: (
    press: { readonly conversationId: string; readonly instanceId: string; readonly invocationId: string; readonly actionBindingId: string }
  ) => Effect.Effect<Option.Option<PressRecord>>
  readonly get: (instanceId: string, invocationId: string) => Effect.Effect<Option.Option<PressRecord>>
  readonly answer: (instanceId: string, invocationId: string, answer: StoredAnswer) => Effect.Effect<void>
  /** Start-up: presses left running by the last process are interrupted; answers how many. */
  readonly interruptRunning: Effect.Effect<number>
  /** Whether any press of the conversation is still running (deletion must wait for it). */
  readonly settling: (conversationId: string) => Effect.Effect<boolean>
  /** Keeps the publish when it is newer than the one held; answers what is held afterwards and whether it was kept. */
  readonly publish: (
    conversationId: string,
    instanceId: string,
    description: SemanticDescription
  ) => Effect.Effect<{ readonly accepted: boolean; readonly held: SemanticDescription }>
  readonly described: (conversationId: string, instanceId: string) => Effect.Effect<Option.Option<SemanticDescription>>
}>() {}
