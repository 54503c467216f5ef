/**
 * The ServiceRuntime over MCP stdio processes. Running services are slots in a SynchronizedRef keyed by
 * package id; a slot owns a scope holding its process and client, and counts the calls holding it. When the
 * last call lets go, an idle timer (a FiberMap fiber on the Clock) stops it unless a call came back first.
 * A slot is always removed from the map before its scope closes, so a call never gets a closing service.
 */
import {
  Array as Arr,
  Config,
  Deferred,
  Duration,
  Effect,
  Exit,
  FiberMap,
  FiberSet,
  HashMap,
  Layer,
  Option,
  type Redacted,
  Ref,
  Scope,
  SynchronizedRef
} from "effect"
import {
  ServiceToolNotOffered,
  ServiceUnreachable
} from "../../../services/node/ServiceErrors.js"
import {
  type RunningService,
  type ServiceCall,
  type ServicePackage,
  ServiceRuntime
} from "../../../services/node/ServiceRuntime.js"
import { invoke } from "./ServiceCall.js"
import { type ServiceProcess, start } from "./ServiceProcess.js"

export interface Options {
  /** Each package's data folder (its HOME, `CLARK_PACKAGE_DATA_DIR`) is made under this one. */
  readonly dataDir: string
  /** No answer within this: `ServiceTimedOut` (default 30 s). */
  readonly callTimeout?: Duration.DurationInput | undefined
  /** Start, MCP handshake and tool listing within this, or `ServiceUnreachable` (default 10 s). */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** After a cancellation or a stop, a process that has not yielded within this is killed (default 2 s). */
  readonly killAfter?: Duration.DurationInput | undefined
  /** A service without calls for this long is stopped (default 5 min). */
  readonly idleAfter?: Duration.DurationInput | undefined
  /**
   * What the package's permissions grant it in its environment, by variable name (its own credentials from
   * the secret broker). Nothing by default. Resolved at each start, so a credential stored later reaches
   * the next process.
   */
  readonly grants?: ((pkg: ServicePackage) => Effect.Effect<Readonly<Record<string, Redacted.Redacted<string>>>>) | undefined
}

export const defaults: {
  readonly callTimeout: Duration.Duration
  readonly connectTimeout: Duration.Duration
  readonly killAfter: Duration.Duration
  readonly idleAfter: Duration.Duration
} = {
  callTimeout: Duration.seconds(30),
  connectTimeout: Duration.seconds(10),
  killAfter: Duration.seconds(2),
  idleAfter: Duration.minutes(5)
}

interface Slot {
  /** Tells a slot from a later one of the same package. */
  readonly id: number
  readonly pkg: ServicePackage
  readonly scope: Scope.CloseableScope
  readonly ready: Deferred.Deferred<ServiceProcess, ServiceUnreachable>
  readonly stopping: Ref.Ref<boolean>
  readonly calls: number
}

/** A copy from another install (new digest or cache copy) is another service. */
const samePackage = (a: ServicePackage, b: ServicePackage) => a.digest === b.digest && a.cachePath === b.cachePath

export const make = (options: Options) => Effect.gen(function*() {
  const settings = {
    callTimeout: Duration.decode(options.callTimeout ?? defaults.callTimeout),
    connectTimeout: Duration.decode(options.connectTimeout ?? defaults.connectTimeout),
    killAfter: Duration.decode(options.killAfter ?? defaults.killAfter),
    idleAfter: Duration.decode(options.idleAfter ?? defaults.idleAfter)
  }
  const grants = options.grants ?? (() => Effect.succeed({}))
  const slots = yield* SynchronizedRef.make(HashMap.empty<string, Slot>())
  const idleTimers = yield* FiberMap.make<string>()
  // Starts and the stopping of replaced services: fibers the layer's scope waits for.
  const background = yield* FiberSet.make()
  const ids = yield* Ref.make(0)

  /** Takes the slot out of the map if it is still there (and, for `idleOnly`, has no call). */
  const detach = (slot: Slot, idleOnly: boolean) =>
    SynchronizedRef.modify(slots, (map): [boolean, HashMap.HashMap<string, Slot>] => {
      const current = HashMap.get(map, slot.pkg.packageId)
      return Option.isSome(current) && current.value.id === slot.id && (!idleOnly || current.value.calls === 0)
        ? [true, HashMap.remove(map, slot.pkg.packageId)]
        : [false, map]
    })

  /** Ends a detached slot's process; calls it cuts off fail as cancelled by a stop. */
  const shut = (slot: Slot) =>
    Ref.set(slot.stopping, true).pipe(Effect.zipRight(Scope.close(slot.scope, Exit.void)), Effect.uninterruptible)

  /**
   * Takes the slot out and releases its process: when idle (no call to cut off), or when the process ended
   * by itself, where the calls it cut off crashed and must say so, not that they were stopped.
   */
  const retire = (slot: Slot, idleOnly: boolean) =>
    Effect.flatMap(detach(slot, idleOnly), (removed) => (removed ? Scope.close(slot.scope, Exit.void) : Effect.void)).pipe(
      Effect.uninterruptible
    )

  const launch = (slot: Slot) =>
    start(slot.pkg, {
      dataDir: options.dataDir,
      connectTimeout: settings.connectTimeout,
      killAfter: settings.killAfter,
      grants,
      // A process that ended by itself (a crash) leaves the map, so the next call starts a new one.
      onExit: retire(slot, false)
    }).pipe(
      Scope.extend(slot.scope),
      Effect.catchAllDefect(() => Effect.fail(new ServiceUnreachable({ packageId: slot.pkg.packageId, reason: "start-failed" }))),
      Effect.exit,
      Effect.flatMap((exit) =>
        Exit.isSuccess(exit)
          ? Deferred.done(slot.ready, exit)
          : Effect.zipRight(
            retire(slot, false),
            Deferred.done(slot.ready, Exit.isInterrupted(exit) ? Exit.fail(new ServiceUnreachable({ packageId: slot.pkg.packageId, reason: "exited" })) : exit)
          )),
      Effect.onInterrupt(() => Deferred.fail(slot.ready, new ServiceUnreachable({ packageId: slot.pkg.packageId, reason: "exited" }))),
      // Forked from the uninterruptible part of `acquire`; the start itself waits on its timeouts.
      Effect.interruptible,
      FiberSet.run(background)
    )

  const release = (slot: Slot) =>
    SynchronizedRef.modify(slots, (map): [boolean, HashMap.HashMap<string, Slot>] => {
      const current = HashMap.get(map, slot.pkg.packageId)
      if (Option.isNone(current) || current.value.id !== slot.id) return [false, map]
      const held = { ...current.value, calls: current.value.calls - 1 }
      return [held.calls === 0, HashMap.set(map, slot.pkg.packageId, held)]
    }).pipe(Effect.flatMap((idle) =>
      idle
        ? FiberMap.run(idleTimers, slot.pkg.packageId, Effect.zipRight(Effect.sleep(settings.idleAfter), retire(slot, true)))
        : Effect.void
    ))

  /** The package's running service, held by the caller's scope; started when there is none. */
  const acquire = (pkg: ServicePackage) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        type Taken = readonly [Slot, boolean, Option.Option<Slot>]
        const [slot, fresh, stale] = yield* SynchronizedRef.modifyEffect(slots, (map) =>
          Effect.gen(function*(): Effect.fn.Return<readonly [Taken, HashMap.HashMap<string, Slot>]> {
            const current = HashMap.get(map, pkg.packageId)
            if (Option.isSome(current) && samePackage(current.value.pkg, pkg)) {
              const held: Slot = { ...current.value, calls: current.value.calls + 1 }
              return [[held, false, Option.none<Slot>()], HashMap.set(map, pkg.packageId, held)]
            }
            const slot: Slot = {
              id: yield* Ref.updateAndGet(ids, (n) => n + 1),
              pkg,
              scope: yield* Scope.make(),
              ready: yield* Deferred.make<ServiceProcess, ServiceUnreachable>(),
              stopping: yield* Ref.make(false),
              calls: 1
            }
            return [[slot, true, current], HashMap.set(map, pkg.packageId, slot)]
          }))
        yield* Effect.addFinalizer(() => release(slot))
        yield* FiberMap.remove(idleTimers, pkg.packageId)
        if (Option.isSome(stale)) yield* FiberSet.run(background, shut(stale.value))
        if (fresh) yield* launch(slot)
        const service = yield* restore(Deferred.await(slot.ready))
        return { slot, service }
      })
    )

  const stopSlot = (slot: Slot) => Effect.zipRight(FiberMap.remove(idleTimers, slot.pkg.packageId), shut(slot))

  const stop = (packageId: string) =>
    SynchronizedRef.modify(slots, (map): [Option.Option<Slot>, HashMap.HashMap<string, Slot>] => [
      HashMap.get(map, packageId),
      HashMap.remove(map, packageId)
    ]).pipe(Effect.flatMap(Option.match({
      onNone: () => Effect.succeed(false),
      onSome: (slot) => Effect.as(stopSlot(slot), true)
    })))

  const stopAll = SynchronizedRef.modify(slots, (map): [Array<Slot>, HashMap.HashMap<string, Slot>] => [
    [...HashMap.values(map)],
    HashMap.empty()
  ]).pipe(Effect.flatMap((all) =>
    Effect.as(Effect.forEach(all, stopSlot, { concurrency: "unbounded", discard: true }), all.length)
  ))

  // Runs before the FiberMap and FiberSet close (finalizers run in reverse): every process is asked to end
  // at once, so shutdown waits one kill bound, not one per service.
  yield* Effect.addFinalizer(() => stopAll)

  const running = Effect.flatMap(SynchronizedRef.get(slots), (map) =>
    Effect.map(
      Effect.forEach([...HashMap.values(map)], (slot) =>
        Effect.flatMap(Deferred.poll(slot.ready), Option.match({
          onNone: () => Effect.succeedNone,
          onSome: (done) => Effect.option(done)
        })).pipe(Effect.map(Option.map((service): RunningService => ({
          packageId: slot.pkg.packageId,
          digest: slot.pkg.digest,
          pid: service.pid,
          calls: slot.calls
        }))))),
      Arr.getSomes
    ))

  return ServiceRuntime.of({
    tools: (pkg) => Effect.scoped(Effect.map(acquire(pkg), ({ service }) => [...service.offered.values()])),
    call: (pkg: ServicePackage, call: ServiceCall) =>
      Effect.scoped(Effect.gen(function*() {
        // A tool the manifest does not declare is refused before any process starts.
        if (!pkg.manifest.tools.some((tool) => tool.name === call.tool)) {
          return yield* new ServiceToolNotOffered({ packageId: pkg.packageId, tool: call.tool })
        }
        const { service, slot } = yield* acquire(pkg)
        if (!service.offered.has(call.tool)) return yield* new ServiceToolNotOffered({ packageId: pkg.packageId, tool: call.tool })
        return yield* invoke(service, call, {
          timeout: Duration.decode(call.timeout ?? settings.callTimeout),
          killAfter: settings.killAfter,
          stopping: slot.stopping
        })
      })),
    stop,
    stopAll,
    running
  })
})

export const layer = (options: Options): Layer.Layer<ServiceRuntime> => Layer.scoped(ServiceRuntime, make(options))

/**
 * The time settings from the environment, each a duration ("30 seconds", "5 minutes") with the defaults
 * above: CC_SERVICE_CALL_TIMEOUT, CC_SERVICE_CONNECT_TIMEOUT, CC_SERVICE_KILL_AFTER, CC_SERVICE_IDLE_AFTER.
 */
export const SettingsConfig = Config.all({
  callTimeout: Config.duration("CC_SERVICE_CALL_TIMEOUT").pipe(Config.withDefault(defaults.callTimeout)),
  connectTimeout: Config.duration("CC_SERVICE_CONNECT_TIMEOUT").pipe(Config.withDefault(defaults.connectTimeout)),
  killAfter: Config.duration("CC_SERVICE_KILL_AFTER").pipe(Config.withDefault(defaults.killAfter)),
  idleAfter: Config.duration("CC_SERVICE_IDLE_AFTER").pipe(Config.withDefault(defaults.idleAfter))
})
