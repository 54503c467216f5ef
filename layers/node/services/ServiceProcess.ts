/**
 * One service process and its MCP client: started, handshaken and listed as a scoped resource, so closing
 * the scope ends the process however it is doing (asked to end, killed after the bound).
 */
import "./ZodJitless.js" // before the SDK: its schemas are made when it loads
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ErrorCode, type JSONRPCMessage, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, type Duration, Effect, Option, Redacted, Runtime, type Scope } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { Tool } from "../../../schema/node/Manifest.js"
import { ServiceUnreachable } from "../../../services/node/ServiceErrors.js"
import type { ServicePackage } from "../../../services/node/ServiceRuntime.js"
import type { CallSignal } from "./CallSignal.js"
import { dataFolderOf, forSpawn, serviceEnv } from "./ServiceEnv.js"

/**
 * The SDK's own per-request timer is set out of the way (setTimeout's largest delay): every time rule of a
 * call is on Effect's Clock, where the runtime's settings and the tests' TestClock decide.
 */
export const sdkTimeoutMillis = 2_147_483_647

export interface ProcessOptions {
  /** Each package's data folder is made under this one. */
  readonly dataDir: string
  readonly connectTimeout: Duration.Duration
  readonly killAfter: Duration.Duration
  readonly grants: (pkg: ServicePackage) => Effect.Effect<Readonly<Record<string, Redacted.Redacted<string>>>>
  /** Runs (forked) when the process has ended, whoever ended it. */
  readonly onExit: Effect.Effect<void>
}

export interface ServiceProcess {
  readonly pkg: ServicePackage
  readonly pid: number
  readonly client: Client
  /** The manifest's tools the server serves too, by name. */
  readonly offered: ReadonlyMap<string, Tool>
  /** Done when the process has ended (its stdio closed). */
  readonly exited: Deferred.Deferred<void>
  /** SIGKILL now; the process cannot refuse it. */
  readonly kill: Effect.Effect<void>
  /** Routes `notifications/progress` carrying this token to `listener` until the returned function is called. */
  readonly onProgress: (token: string, listener: (progress: ProgressParams) => void) => () => void
  /**
   * Registers a call's CallSignal until the returned function is called, so that ending the service
   * cancels its calls over MCP before stdin closes.
   */
  readonly track: (controller: CallSignal) => () => void
}

export interface ProgressParams {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

const version = "1"

/**
 * The SDK hands a notification to its handler a microtask later but settles a response at once, and drops
 * the request's progress handler with it: the last notifications before an answer were lost (3 of 4 in
 * the progress test). Progress is taken off the transport instead, in arrival order, before the SDK sees
 * the message; calls use their own tokens, so the SDK's progress handling never applies. A plain Map: it
 * is read inside the transport's synchronous callback.
 */
const routeProgress = (transport: StdioClientTransport) => {
  const listeners = new Map<string, (progress: ProgressParams) => void>()
  const forward = transport.onmessage
  transport.onmessage = (message: JSONRPCMessage) => {
    if ("method" in message && message.method === "notifications/progress" && !("id" in message)) {
      const params = (message.params ?? {}) as Record<string, unknown>
      const listener = typeof params.progressToken === "string" ? listeners.get(params.progressToken) : undefined
      if (listener !== undefined && typeof params.progress === "number") {
        listener({
          progress: params.progress,
          total: typeof params.total === "number" ? params.total : undefined,
          message: typeof params.message === "string" ? params.message : undefined
        })
      }
      return
    }
    forward?.(message)
  }
  return (token: string, listener: (progress: ProgressParams) => void) => {
    listeners.set(token, listener)
    return () => {
      listeners.delete(token)
    }
  }
}

/** The entry of the package's service facet, inside its cache copy. */
const entryOf = (pkg: ServicePackage) =>
  Option.fromNullable(pkg.manifest.facets.find((facet) => facet.kind === "service" && facet.isolation === "service")?.entry)

/** The calls in flight, by their CallSignals (a plain Set: the SDK's promise callbacks update it). */
const tracking = () => {
  const inFlight = new Set<CallSignal>()
  return {
    track: (controller: CallSignal) => {
      inFlight.add(controller)
      return () => {
        inFlight.delete(controller)
      }
    },
    cancelAll: (reason: string) => {
      for (const controller of inFlight) controller.abort(reason)
      inFlight.clear()
    }
  }
}

const isClosed = (error: unknown) => error instanceof McpError && error.code === ErrorCode.ConnectionClosed

const killPid = (pid: number) =>
  Effect.sync(() => {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Already gone.
    }
  })

/**
 * Ends the process: the client closes stdin (a stdio server's cue to exit), and a process still there after
 * `killAfter` is killed. Waits until it has gone.
 */
const close = (service: Omit<ServiceProcess, "offered"> & { readonly cancelAll: (reason: string) => void }, killAfter: Duration.Duration) =>
  Effect.gen(function*() {
    if (yield* Deferred.isDone(service.exited)) return
    service.cancelAll("the service is stopping")
    // The SDK's close waits seconds of its own before signalling; the node's bound is `killAfter`, so it is
    // not awaited.
    service.client.close().catch(() => undefined)
    // Interruptible inside this uninterruptible close, so the bound can cut the wait short.
    const ended = yield* Deferred.await(service.exited).pipe(Effect.interruptible, Effect.timeoutTo({
      duration: killAfter,
      onSuccess: () => true,
      onTimeout: () => false
    }))
    if (!ended) {
      yield* service.kill
      yield* Deferred.await(service.exited)
    }
  }).pipe(Effect.uninterruptible)

export const start = (pkg: ServicePackage, options: ProcessOptions): Effect.Effect<ServiceProcess, ServiceUnreachable, Scope.Scope> =>
  Effect.gen(function*() {
    const unreachable = (reason: ServiceUnreachable["reason"]) => new ServiceUnreachable({ packageId: pkg.packageId, reason })
    const entry = yield* Option.match(entryOf(pkg), {
      onNone: () => Effect.fail(unreachable("no-service-facet")),
      onSome: Effect.succeed
    })
    const dataFolder = dataFolderOf(options.dataDir, pkg.packageId)
    yield* Effect.tryPromise(() => fs.mkdir(path.join(dataFolder, ".tmp"), { recursive: true, mode: 0o700 })).pipe(
      Effect.mapError(() => unreachable("start-failed"))
    )
    const granted = yield* options.grants(pkg)
    const { env, refused } = serviceEnv({
      packageId: pkg.packageId,
      dataFolder,
      inheritedPath: process.env.PATH,
      inheritedLang: process.env.LANG,
      grants: Object.fromEntries(Object.entries(granted).map(([name, value]) => [name, Redacted.value(value)]))
    })
    if (refused.length > 0) yield* Effect.logWarning("service grants refused", { packageId: pkg.packageId, names: refused })

    const runtime = yield* Effect.runtime<never>()
    const exited = yield* Deferred.make<void>()
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [entry],
      cwd: pkg.cachePath,
      env: forSpawn(env),
      // A service's stderr is its own business and may echo its credentials: neither the node's log nor its
      // terminal gets it.
      stderr: "ignore"
    })
    const client = new Client({ name: "clark-node", version }, { capabilities: {} })
    client.onclose = () => {
      Runtime.runFork(runtime)(Deferred.succeed(exited, undefined).pipe(Effect.zipRight(options.onExit)))
    }
    // Errors the SDK cannot tie to a request (a bad line on stdout, a write to a closed pipe) end up as the
    // process ending or a request failing; the handler only keeps them from being thrown.
    client.onerror = () => undefined

    const service = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: (signal) => client.connect(transport, { signal, timeout: sdkTimeoutMillis }),
        // The SDK rejects pending requests with ConnectionClosed when the process ends.
        catch: (error) => (isClosed(error) ? "exited" as const : "failed" as const)
      }).pipe(
        // An acquisition is uninterruptible: the handshake inside it must not be, or the timeout could not
        // end a silent one.
        Effect.interruptible,
        Effect.timeoutFail({ duration: options.connectTimeout, onTimeout: () => "timeout" as const }),
        Effect.flatMap(() => Effect.sync(() => transport.pid)),
        Effect.flatMap((pid) => pid === null ? Effect.fail("failed" as const) : Effect.succeed(pid)),
        Effect.map((pid) => ({ pkg, pid, client, exited, kill: killPid(pid), onProgress: routeProgress(transport), ...tracking() })),
        Effect.catchAll((why) =>
          Effect.gen(function*() {
            // The transport forgets its process once it has closed: no pid, nothing left to kill.
            const pid = transport.pid
            if (pid !== null) yield* killPid(pid)
            return yield* Effect.fail(unreachable(
              why === "timeout" ? "handshake-timeout" : why === "exited" || pid === null ? "exited" : "handshake-failed"
            ))
          })
        )
      ),
      (service) => close(service, options.killAfter)
    )

    const listed = yield* Effect.tryPromise((signal) => client.listTools(undefined, { signal, timeout: sdkTimeoutMillis })).pipe(
      Effect.timeoutFail({ duration: options.connectTimeout, onTimeout: () => unreachable("handshake-timeout") }),
      Effect.catchTag("UnknownException", (error) =>
        Effect.fail(unreachable(isClosed(error.error) || transport.pid === null ? "exited" : "handshake-failed")))
    )
    const served = new Set(listed.tools.map((tool) => tool.name))
    const offered = new Map(pkg.manifest.tools.filter((tool) => served.has(tool.name)).map((tool) => [tool.name, tool]))
    const undeclared = [...served].filter((name) => !offered.has(name))
    const missing = pkg.manifest.tools.filter((tool) => !served.has(tool.name)).map((tool) => tool.name)
    if (undeclared.length > 0 || missing.length > 0) {
      yield* Effect.logWarning("service tools differ from the manifest", {
        packageId: pkg.packageId,
        notOffered: undeclared.slice(0, 20),
        notServed: missing
      })
    }
    return { ...service, offered }
  }).pipe(Effect.withSpan("ServiceRuntime.start", { attributes: { packageId: pkg.packageId } }))

