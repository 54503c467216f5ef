/**
 * The ServiceRuntime over MCP stdio processes. Running services are slots in a Ref keyed by package id
 * (every change a pure update, so no lock: a new slot is made first and kept only if none came meanwhile);
 * a slot owns a scope holding its process and client, and counts the calls holding it. A call takes its
 * slot once and lets go when it ends (no Scope of its own). Each slot has one idle watcher for its
 * whole life (a FiberMap fiber on the Clock, keyed by the slot): it wakes when the idle time since the last
 * call's end could be up, and stops the service if no call came back, so a call forks no timer of its own.
 * A slot is always removed from the map before its scope closes, so a call never gets a closing service.
 */
import {
  Array as Arr,
  Clock,
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
  Scope
} from "effect"
import * as Deadlines from "./Deadlines.js"
import {
  type ServiceCallError,
  ServiceToolNotOffered,
  ServiceUnreachable
} from "../../../services/node/ServiceErrors.js"
import {
  type RunningService,
  type ServiceCall,
  type ServicePackage,
  ServiceRuntime,
  type ServiceToolResult
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
  /** When the last call let go (Clock millis); read by the idle watcher when `calls` is 0. */
  readonly idleSince: number
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
  const idleMillis = Duration.toMillis(settings.idleAfter)
  const grants = options.grants ?? (() => Effect.succeed({}))
  const slots = yield* Ref.make(HashMap.empty<string, Slot>())
  // One idle watcher per slot, keyed by the slot's id (not the package's: a stop must not end a newer slot's).
  const idleWatchers = yield* FiberMap.make<number>()
  // Starts and the stopping of replaced services: fibers the layer's scope waits for.
  const background = yield* FiberSet.make()
  const ids = yield* Ref.make(0)
  // The calls' timeouts: one sleeper fiber in this scope, not a timer fiber per call.
  const deadlines = yield* Deadlines.make(yield* Effect.scope)

  /** Takes the slot out of the map if it is still there. */
  const detach = (slot: Slot) =>
    Ref.modify(slots, (map): [boolean, HashMap.HashMap<string, Slot>] => {
      const current = HashMap.get(map, slot.pkg.packageId)
      return Option.isSome(current) && current.value.id === slot.id
        ? [true, HashMap.remove(map, slot.pkg.packageId)]
        : [false, map]
    })

  /** Ends a detached slot's process; calls it cuts off fail as cancelled by a stop. */
  const shut = (slot: Slot) =>
    Ref.set(slot.stopping, true).pipe(Effect.zipRight(Scope.close(slot.scope, Exit.void)), Effect.uninterruptible)

  /**
   * Takes the slot out and releases its process when the process ended by itself (or never started), where
   * the calls it cut off crashed and must say so, not that they were stopped.
   */
  const retire = (slot: Slot) =>
    Effect.flatMap(detach(slot), (removed) =>
      removed
        ? Effect.zipRight(Scope.close(slot.scope, Exit.void), FiberMap.remove(idleWatchers, slot.id))
        : Effect.void).pipe(Effect.uninterruptible)

  type Watch = { readonly _tag: "gone" } | { readonly _tag: "idle" } | { readonly _tag: "wait"; readonly millis: number }
  /**
   * The slot's idle watcher: sleeps until the idle time since the last release could be up, then stops the
   * service when it has had no call for that long (taken out of the map in the same step, so a call cannot
   * take it in between), or sleeps for what is left. Ends when its slot has left the map.
   */
  const watch = (slot: Slot, millis: number): Effect.Effect<void> =>
    Effect.sleep(Duration.millis(millis)).pipe(
      Effect.zipRight(Clock.currentTimeMillis),
      Effect.flatMap((now) =>
        Ref.modify(slots, (map): [Watch, HashMap.HashMap<string, Slot>] => {
          const current = HashMap.get(map, slot.pkg.packageId)
          if (Option.isNone(current) || current.value.id !== slot.id) return [{ _tag: "gone" }, map]
          if (current.value.calls > 0) return [{ _tag: "wait", millis: idleMillis }, map]
          const idleFor = now - current.value.idleSince
          return idleFor >= idleMillis
            ? [{ _tag: "idle" }, HashMap.remove(map, slot.pkg.packageId)]
            : [{ _tag: "wait", millis: idleMillis - idleFor }, map]
        }).pipe(
          Effect.flatMap((next): Effect.Effect<number | undefined> => {
            switch (next._tag) {
              case "wait":
                return Effect.succeed(next.millis)
              case "idle":
                return Effect.as(Scope.close(slot.scope, Exit.void), undefined)
              case "gone":
                return Effect.succeed(undefined)
            }
          }),
          Effect.uninterruptible
        )
      ),
      Effect.flatMap((again) => (again === undefined ? Effect.void : watch(slot, again)))
    )

  const launch = (slot: Slot) =>
    start(slot.pkg, {
      dataDir: options.dataDir,
      connectTimeout: settings.connectTimeout,
      killAfter: settings.killAfter,
      grants,
      // A process that ended by itself (a crash) leaves the map, so the next call starts a new one.
      onExit: retire(slot)
    }).pipe(
      Scope.extend(slot.scope),
      Effect.catchAllDefect(() => Effect.fail(new ServiceUnreachable({ packageId: slot.pkg.packageId, reason: "start-failed" }))),
      Effect.exit,
      Effect.flatMap((exit) =>
        Exit.isSuccess(exit)
          ? Deferred.done(slot.ready, exit)
          : Effect.zipRight(
            retire(slot),
            Deferred.done(slot.ready, Exit.isInterrupted(exit) ? Exit.fail(new ServiceUnreachable({ packageId: slot.pkg.packageId, reason: "exited" })) : exit)
          )),
      Effect.onInterrupt(() => Deferred.fail(slot.ready, new ServiceUnreachable({ packageId: slot.pkg.packageId, reason: "exited" }))),
      // Forked from the uninterruptible part of `hold`; the start itself waits on its timeouts.
      Effect.interruptible,
      FiberSet.run(background),
      Effect.zipRight(FiberMap.run(idleWatchers, slot.id, watch(slot, idleMillis)))
    )

  /** One call fewer on the slot; the last one notes when, for the idle watcher. */
  const release = (slot: Slot) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Ref.update(slots, (map) => {
        const current = HashMap.get(map, slot.pkg.packageId)
        if (Option.isNone(current) || current.value.id !== slot.id) return map
        const calls = current.value.calls - 1
        return HashMap.set(map, slot.pkg.packageId, { ...current.value, calls, idleSince: calls === 0 ? now : current.value.idleSince })
      }))

  type Taken = readonly [Slot, boolean, Option.Option<Slot>]
  /** The running slot of the package with one call more, if it runs this copy. */
  const held = (map: HashMap.HashMap<string, Slot>, pkg: ServicePackage) => {
    const current = HashMap.get(map, pkg.packageId)
    return Option.isSome(current) && samePackage(current.value.pkg, pkg)
      ? { ...current.value, calls: current.value.calls + 1 }
      : undefined
  }
  /** The package's slot with one call more: the running one, or a new one (and the one it replaces). */
  const take = (pkg: ServicePackage): Effect.Effect<Taken> =>
    Effect.flatMap(
      Ref.modify(slots, (map): [Taken | undefined, HashMap.HashMap<string, Slot>] => {
        const slot = held(map, pkg)
        return slot === undefined ? [undefined, map] : [[slot, false, Option.none()], HashMap.set(map, pkg.packageId, slot)]
      }),
      (taken) =>
        taken !== undefined ? Effect.succeed(taken) : Effect.gen(function*() {
          const slot: Slot = {
            id: yield* Ref.updateAndGet(ids, (n) => n + 1),
            pkg,
            scope: yield* Scope.make(),
            ready: yield* Deferred.make<ServiceProcess, ServiceUnreachable>(),
            stopping: yield* Ref.make(false),
            calls: 1,
            idleSince: 0
          }
          // Another call may have put a slot in meanwhile: that one is taken, this one (nothing in it yet) dropped.
          return yield* Ref.modify(slots, (map): [Taken, HashMap.HashMap<string, Slot>] => {
            const other = held(map, pkg)
            return other !== undefined
              ? [[other, false, Option.none()], HashMap.set(map, pkg.packageId, other)]
              : [[slot, true, HashMap.get(map, pkg.packageId)], HashMap.set(map, pkg.packageId, slot)]
          })
        })
    )

  /**
   * Runs `use` on the package's running service (started when there is none), holding its slot meanwhile:
   * one take and one release per use, whatever `use` does.
   */
  const hold = <A, E>(
    pkg: ServicePackage,
    use: (service: ServiceProcess, slot: Slot) => Effect.Effect<A, E>
  ): Effect.Effect<A, E | ServiceUnreachable> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(take(pkg), ([slot, fresh, stale]) => {
        const started = fresh
          ? Effect.zipRight(Option.isSome(stale) ? FiberSet.run(background, stopSlot(stale.value)) : Effect.void, launch(slot))
          : Effect.void
        return Effect.zipRight(
          started,
          restore(Effect.flatMap(Deferred.await(slot.ready), (service) => use(service, slot)))
        ).pipe(Effect.ensuring(release(slot)))
      })
    )

  const callOn = (pkg: ServicePackage, service: ServiceProcess, slot: Slot, call: ServiceCall) =>
    service.offered.has(call.tool)
      ? invoke(service, call, {
        timeout: call.timeout === undefined ? settings.callTimeout : Duration.decode(call.timeout),
        killAfter: settings.killAfter,
        stopping: slot.stopping,
        deadlines
      })
      : Effect.fail(new ServiceToolNotOffered({ packageId: pkg.packageId, tool: call.tool }))

  const stopSlot = (slot: Slot) => Effect.zipRight(FiberMap.remove(idleWatchers, slot.id), shut(slot))

  const stop = (packageId: string) =>
    Ref.modify(slots, (map): [Option.Option<Slot>, HashMap.HashMap<string, Slot>] => [
      HashMap.get(map, packageId),
      HashMap.remove(map, packageId)
    ]).pipe(Effect.flatMap(Option.match({
      onNone: () => Effect.succeed(false),
      onSome: (slot) => Effect.as(stopSlot(slot), true)
    })))

  const stopAll = Ref.modify(slots, (map): [Array<Slot>, HashMap.HashMap<string, Slot>] => [
    [...HashMap.values(map)],
    HashMap.empty()
  ]).pipe(Effect.flatMap((all) =>
    Effect.as(Effect.forEach(all, stopSlot, { concurrency: "unbounded", discard: true }), all.length)
  ))

  // Runs before the FiberMap and FiberSet close (finalizers run in reverse): every process is asked to end
  // at once, so shutdown waits one kill bound, not one per service.
  yield* Effect.addFinalizer(() => stopAll)

  const running = Effect.flatMap(Ref.get(slots), (map) =>
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

  const offeredTools = (service: ServiceProcess) => [...service.offered.values()]

  return ServiceRuntime.of({
    tools: (pkg) => hold(pkg, (service) => Effect.succeed(offeredTools(service))),
    call: (pkg: ServicePackage, call: ServiceCall) =>
      // A tool the manifest does not declare is refused before any process starts.
      pkg.manifest.tools.some((tool) => tool.name === call.tool)
        ? hold(pkg, (service, slot) => callOn(pkg, service, slot, call))
        : Effect.fail(new ServiceToolNotOffered({ packageId: pkg.packageId, tool: call.tool })),
    reach: (pkg, use) =>
      hold(pkg, (service, slot) =>
        use({
          tools: offeredTools(service),
          call: (call): Effect.Effect<ServiceToolResult, ServiceCallError> =>
            pkg.manifest.tools.some((tool) => tool.name === call.tool)
              ? callOn(pkg, service, slot, call)
              : Effect.fail(new ServiceToolNotOffered({ packageId: pkg.packageId, tool: call.tool }))
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
