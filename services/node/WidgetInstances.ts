/**
 * Widget instances (spec, "Widget routes"; docs/decisions.md, "Widget instances"): a widget the assistant placed
 * in a conversation, bound to the exact package content it was placed from. Each action binding carries a
 * digest over what pressing it does, so a page drawn from an older placement cannot press a changed binding.
 * The revision moves with every press that writes the timeline; a host-held player's view state has its own
 * `stateRevision` and never moves it.
 */
import canonicalize from "canonicalize"
import { Context, type Effect, type Option } from "effect"
import { createHash } from "node:crypto"
import type { PressRecord } from "./WidgetPressLog.js"

/** Host-held players: widgets the node itself provides, whose only binding writes their view state. */
export const hostPlayers = ["canvas.video@1", "canvas.audio@1"] as const
export type HostPlayer = (typeof hostPlayers)[number]

/** The package id under which host-held players are stored (no installed package has it: npm names cannot). */
export const hostPackageId = "clark:host"

/** What a binding does when pressed, as the manifest declares it (view-state for host-held players). */
export type BindingSpec =
  | { readonly id: string; readonly kind: "tool"; readonly tool: string; readonly perMinute: number }
  | { readonly id: string; readonly kind: "agent"; readonly instruction: string; readonly perMinute: number }
  | { readonly id: string; readonly kind: "view-state"; readonly perMinute: number }

export type WidgetBinding = BindingSpec & {
  /** `sha256:` over the package, its content digest, the widget and the binding: what `expectedBindingDigest` names. */
  readonly digest: string
}

export interface WidgetInstance {
  readonly instanceId: string
  readonly conversationId: string
  /** The package's id (its npm name), or `hostPackageId` for a host-held player. */
  readonly packageId: string
  readonly version: string
  readonly contentDigest: string
  readonly widgetId: string
  readonly props: unknown
  readonly revision: number
  readonly bindings: ReadonlyArray<WidgetBinding>
  readonly offeredActions: ReadonlyArray<string>
  /** The turn that placed it (null for a placement outside a turn). */
  readonly taskId: string | null
  readonly placedAt: string
}

export interface NewInstance {
  readonly conversationId: string
  readonly packageId: string
  readonly version: string
  readonly contentDigest: string
  readonly widgetId: string
  readonly props: unknown
  readonly bindings: ReadonlyArray<BindingSpec>
  readonly offeredActions: ReadonlyArray<string>
  readonly taskId: string | null
}

/** A host-held player's playback state as last written. */
export interface ViewState {
  readonly sequence: number
  readonly invocationId: string
  readonly stateRevision: number
  readonly state: unknown
}

export type ViewStateWrite =
  | { readonly _tag: "Written"; readonly current: ViewState }
  /** The sequence was not newer than the last accepted write: nothing written. */
  | { readonly _tag: "NotNewer"; readonly current: ViewState }

export class WidgetInstances extends Context.Tag("clark/node/WidgetInstances")<WidgetInstances, {
  /** The instance, only when it is in this conversation. */
  readonly get: (conversationId: string, instanceId: string) => Effect.Effect<Option.Option<WidgetInstance>>
  /**
   * What a press reads first, in one statement: the instance (only in this conversation) and the record of an
   * earlier press with this invocation id, if any (rule 6).
   */
  readonly forPress: (
    conversationId: string,
    instanceId: string,
    invocationId: string
  ) => Effect.Effect<Option.Option<{ readonly instance: WidgetInstance; readonly earlier: Option.Option<PressRecord> }>>
  /** Stores a new instance at revision 1, its bindings' digests computed from the package content. */
  readonly place: (instance: NewInstance) => Effect.Effect<WidgetInstance>
  /** The conversation's instances, oldest first. */
  readonly list: (conversationId: string) => Effect.Effect<ReadonlyArray<WidgetInstance>>
  /** Moves the revision by one (a press that wrote the timeline); answers the new revision. */
  readonly advance: (conversationId: string, instanceId: string) => Effect.Effect<number>
  readonly viewState: (conversationId: string, instanceId: string) => Effect.Effect<Option.Option<ViewState>>
  /** Writes the state only when `sequence` is newer than the last accepted one (one conditional write). */
  readonly writeViewState: (
    conversationId: string,
    instanceId: string,
    write: { readonly sequence: number; readonly invocationId: string; readonly state: unknown }
  ) => Effect.Effect<ViewStateWrite>
}>() {}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** The digest of a binding: changes when the package content, the widget or the binding itself changes. */
export const bindingDigest = (packageId: string, contentDigest: string, widgetId: string, binding: BindingSpec) =>
  `sha256:${sha256(canonicalize(["widget-binding", packageId, contentDigest, widgetId, binding]) ?? "")}`

export const withDigests = (
  packageId: string,
  contentDigest: string,
  widgetId: string,
  bindings: ReadonlyArray<BindingSpec>
): ReadonlyArray<WidgetBinding> =>
  bindings.map((binding) => ({ ...binding, digest: bindingDigest(packageId, contentDigest, widgetId, binding) }))

/** A host-held player's one binding: its view-state writes (a player reports its position a few times a second at most). */
export const playerBinding: BindingSpec = { id: "view-state", kind: "view-state", perMinute: 600 }
