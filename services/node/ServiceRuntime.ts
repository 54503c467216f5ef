/**
 * Service packages at run time (DESIGN.md, "Local node: packages, widgets and services"): each installed
 * `service` package is a Model Context Protocol server over stdio in a process of its own, started on first
 * use, stopped when idle, on `stop` (uninstall) and when the node stops. The node is its MCP client.
 *
 * What a service offers is the manifest's tools that the running server also serves, with the manifest's
 * description, input schema and risk class (the manifest is what the person approved; the server's own
 * description of itself is not trusted).
 */
import { Context, type Duration, type Effect } from "effect"
import type { Manifest, Tool } from "../../schema/node/Manifest.js"
import type { ServiceCallError, ServiceUnreachable } from "./ServiceErrors.js"

export * from "./ServiceErrors.js"

/** An installed package as the runtime needs it (services/node/PackageRecords.ts `InstalledPackage` fits). */
export interface ServicePackage {
  readonly packageId: string
  /** The digest the install was bound to: a call for another digest restarts the service from the new copy. */
  readonly digest: string
  /** The package's copy in the node's cache: the service's working directory, its entry resolved inside it. */
  readonly cachePath: string
  readonly manifest: Manifest
}

/** A `notifications/progress` of the call, as the service sent it. */
export interface ServiceProgress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

export interface ServiceCall {
  readonly tool: string
  /** The tool's arguments, passed as is (checking them against the manifest's schema is the caller's). */
  readonly input: Readonly<Record<string, unknown>>
  /**
   * Called with each progress notification of this call, one after another in the order they came; a
   * failure or slowness of the callback never fails the call (progress is advisory). Asking for progress is
   * what makes the node send a `progressToken`.
   */
  readonly onProgress?: ((progress: ServiceProgress) => Effect.Effect<void>) | undefined
  /** Overrides the runtime's call timeout (a job's tool may run far longer than a turn's). */
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * When this completes before the answer, the call is cancelled over MCP and fails with
   * `ServiceCancelled {by: "caller"}`. (Interrupting the calling fiber cancels the same way, as an
   * interruption.)
   */
  readonly cancel?: Effect.Effect<void> | undefined
}

/** A content block of an MCP tool result (text, image, audio, resource link, embedded resource). */
export interface ServiceContent {
  readonly type: string
  readonly [field: string]: unknown
}

export interface ServiceToolResult {
  readonly content: ReadonlyArray<ServiceContent>
  readonly structuredContent?: Readonly<Record<string, unknown>> | undefined
  /** The tool reported its own failure: still an answer (MCP reports tool errors inside results). */
  readonly isError: boolean
}

/** A running service, for diagnostics and tests. */
export interface RunningService {
  readonly packageId: string
  readonly digest: string
  readonly pid: number
  /** Calls in flight. */
  readonly calls: number
}

/** A service reached and held for one use (`ServiceRuntime.reach`): what it offers, and calls on that process. */
export interface ReachedService {
  readonly tools: ReadonlyArray<Tool>
  /** Calls one tool on the held service (not another process, were this one to end meanwhile). */
  readonly call: (call: ServiceCall) => Effect.Effect<ServiceToolResult, ServiceCallError>
}

export class ServiceRuntime extends Context.Tag("clark/node/ServiceRuntime")<ServiceRuntime, {
  /** The tools the package's service offers; starts it if it is not running. */
  readonly tools: (pkg: ServicePackage) => Effect.Effect<ReadonlyArray<Tool>, ServiceUnreachable>
  /** Calls one tool, starting the service if it is not running. */
  readonly call: (pkg: ServicePackage, call: ServiceCall) => Effect.Effect<ServiceToolResult, ServiceCallError>
  /**
   * Reaches the package's service (starting it) and holds it while `use` runs: what to do between finding
   * the service reachable and sending a call (a call with an effect writes the ledger there), with one hold
   * of the service, not one to look and another to call. Fails with `ServiceUnreachable` only when the
   * service could not be reached; `use` runs only when it was.
   */
  readonly reach: <A, E>(
    pkg: ServicePackage,
    use: (service: ReachedService) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | ServiceUnreachable>
  /**
   * Stops the package's service (uninstall): its calls in flight fail with `ServiceCancelled {by: "stop"}`,
   * its process is asked to end and killed if it has not within the kill bound. False when none ran.
   */
  readonly stop: (packageId: string) => Effect.Effect<boolean>
  /** Stops every service (emergency stop); answers how many were running. */
  readonly stopAll: Effect.Effect<number>
  readonly running: Effect.Effect<ReadonlyArray<RunningService>>
}>() {}
