/**
 * The service runtime on real child processes speaking MCP over stdio (the probe package): answers, each
 * error kind, cancellation reaching the server, a wedged process killed within the bound, stop and
 * shutdown, and the idle stop on the test clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, type Duration, Effect, Exit, Fiber, Layer, Option, Ref, Scope, Supervisor, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { dataFolderOf } from "../../../layers/node/services/ServiceEnv.js"
import { ServiceRuntime } from "../../../services/node/ServiceRuntime.js"
import { alive, armed, eventually, gone, layer, probe, tempDir } from "./fixtures/Services.js"

const pidOf = (packageId: string) =>
  Effect.flatMap(ServiceRuntime, (runtime) =>
    Effect.map(runtime.running, (all) => all.find((service) => service.packageId === packageId)?.pid))

/** Calls `slow` in a fiber and waits until the server has it (its first progress notification). */
const slowCallStarted = (extra: { readonly cancel?: Effect.Effect<void>; readonly timeout?: Duration.DurationInput } = {}) =>
  Effect.gen(function*() {
    const runtime = yield* ServiceRuntime
    const started = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(runtime.call(probe(), {
      tool: "slow",
      input: { millis: 600_000 },
      onProgress: () => Deferred.succeed(started, undefined),
      ...extra
    }))
    yield* Deferred.await(started)
    return fiber
  })

const events = Effect.flatMap(ServiceRuntime, (runtime) =>
  Effect.map(runtime.call(probe(), { tool: "events", input: {} }), (result) =>
    (result.structuredContent as { events: Array<string> }).events))

describe("service runtime", () => {
  it.scoped("starts the service on first use and answers reads and writes from one process", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      expect(yield* runtime.running).toEqual([])
      const written = yield* runtime.call(probe(), { tool: "write_value", input: { key: "a", value: "one" } })
      expect(written).toEqual({ content: [{ type: "text", text: "written" }], isError: false })
      const read = yield* runtime.call(probe(), { tool: "read_value", input: { key: "a" } })
      expect(read).toEqual({ content: [{ type: "text", text: "one" }], structuredContent: { found: true }, isError: false })
      const running = yield* runtime.running
      expect(running).toHaveLength(1)
      expect(running[0]).toMatchObject({ packageId: "@clark-tests/probe-service", calls: 0 })
      expect(alive(running[0]!.pid)).toBe(true)
    }).pipe(Effect.provide(layer())))

  it.scoped("offers the manifest's tools the server serves: not one it does not declare, nor one it does not serve", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const undeclared = yield* Effect.flip(runtime.call(probe(), { tool: "undeclared_tool", input: {} }))
      expect(undeclared).toMatchObject({ _tag: "ServiceToolNotOffered", tool: "undeclared_tool" })
      expect(yield* runtime.running).toEqual([]) // refused before any process started

      const offered = yield* runtime.tools(probe())
      expect(offered.map((tool) => tool.name)).toEqual(
        probe().manifest.tools.map((tool) => tool.name).filter((name) => name !== "ghost")
      )
      expect(offered.find((tool) => tool.name === "write_value")).toMatchObject({ risk: "local-write" })
      const ghost = yield* Effect.flip(runtime.call(probe(), { tool: "ghost", input: {} }))
      expect(ghost).toMatchObject({ _tag: "ServiceToolNotOffered", tool: "ghost" })
    }).pipe(Effect.provide(layer())))

  it.scoped("hands progress to the caller in order", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const seen = yield* Ref.make<Array<unknown>>([])
      const result = yield* runtime.call(probe(), {
        tool: "progress",
        input: { steps: 4 },
        onProgress: (p) => Ref.update(seen, (all) => [...all, p])
      })
      expect(result.content).toEqual([{ type: "text", text: "4 steps" }])
      yield* eventually("four progress notifications", Effect.map(Ref.get(seen), (all) => (all.length === 4 ? true : undefined)))
      expect(yield* Ref.get(seen)).toEqual([1, 2, 3, 4].map((progress) => ({ progress, total: 4, message: undefined })))
    }).pipe(Effect.provide(layer())))

  it.scoped("a tool's own failure is an answer; a protocol error is ServiceToolFailed", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const soft = yield* runtime.call(probe(), { tool: "fail", input: { soft: true } })
      expect(soft).toEqual({ content: [{ type: "text", text: "the tool says no" }], isError: true })
      const hard = yield* Effect.flip(runtime.call(probe(), { tool: "fail", input: {} }))
      expect(hard).toMatchObject({ _tag: "ServiceToolFailed", reason: "error", tool: "fail" })
      expect(hard._tag === "ServiceToolFailed" ? hard.detail : "").toContain("the probe failed on purpose")
    }).pipe(Effect.provide(layer())))

  it.scoped("a process that dies mid-call is ServiceToolFailed (crashed), and the next call starts a new one", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      yield* runtime.call(probe(), { tool: "write_value", input: { key: "a", value: "one" } })
      const first = (yield* pidOf(probe().packageId))!
      const crashed = yield* Effect.flip(runtime.call(probe(), { tool: "crash", input: {} }))
      expect({ ...crashed }).toEqual({ _tag: "ServiceToolFailed", reason: "crashed", tool: "crash", packageId: probe().packageId })
      yield* gone(first)
      yield* eventually("the crashed service left", Effect.map(runtime.running, (all) => (all.length === 0 ? true : undefined)))
      const read = yield* runtime.call(probe(), { tool: "read_value", input: { key: "a" } })
      expect(read.structuredContent).toEqual({ found: false }) // a new process, with nothing in memory
      expect(yield* pidOf(probe().packageId)).not.toBe(first)
    }).pipe(Effect.provide(layer())))

  it.scoped("no answer within the timeout is ServiceTimedOut, and the server sees the cancellation", () =>
    Effect.gen(function*() {
      const fiber = yield* slowCallStarted()
      yield* armed(30_000)
      yield* TestClock.adjust("30 seconds")
      const timedOut = yield* Effect.flip(Fiber.join(fiber))
      expect(timedOut).toMatchObject({ _tag: "ServiceTimedOut", tool: "slow", timeoutMillis: 30_000 })
      expect(yield* events).toEqual(["slow:cancelled:cancelled by the node"])
    }).pipe(Effect.provide(layer())))

  it.scoped("a call forks no timer of its own, and the deadlines' sleeper armed from an uninterruptible region can be interrupted", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const supervisor = yield* Supervisor.track
      // As a widget press calls (inside its uninterruptible claim-to-answer region): the first call arms the sleeper.
      const first = yield* Effect.uninterruptible(runtime.call(probe(), { tool: "read_value", input: { key: "a" } })).pipe(
        Effect.supervised(supervisor)
      )
      expect(first.isError).toBe(false)
      const sleepers = yield* Effect.filter(yield* supervisor.value, (fiber) => Effect.map(Fiber.poll(fiber), Option.isNone))
      expect(sleepers.length).toBeGreaterThan(0)
      // The next calls' deadlines are later than the one the sleeper waits for: no fiber is forked for them.
      const again = yield* Supervisor.track
      for (let i = 0; i < 3; i++) {
        yield* Effect.uninterruptible(runtime.call(probe(), { tool: "read_value", input: { key: "a" } })).pipe(Effect.supervised(again))
      }
      expect((yield* again.value).length).toBe(0)
      // The clock never moves here: a sleeper deaf to interruption would still be running after any number of turns.
      for (const fiber of sleepers) yield* Fiber.interruptFork(fiber)
      yield* Effect.repeatN(Effect.yieldNow(), 20)
      const running = yield* Effect.filter(sleepers, (fiber) => Effect.map(Fiber.poll(fiber), Option.isNone))
      expect(running.length).toBe(0)
    }).pipe(Effect.provide(layer())))

  it.scoped("interrupting a call sends MCP cancellation: the slow tool sees its signal, its process lives on", () =>
    Effect.gen(function*() {
      const fiber = yield* slowCallStarted()
      const pid = (yield* pidOf(probe().packageId))!
      yield* Fiber.interrupt(fiber)
      expect(yield* events).toEqual(["slow:cancelled:cancelled by the node"])
      expect(yield* pidOf(probe().packageId)).toBe(pid)
      expect(alive(pid)).toBe(true)
    }).pipe(Effect.provide(layer())))

  it.scoped("a caller's cancel ends the call as ServiceCancelled, cancelled on the server too", () =>
    Effect.gen(function*() {
      const cancel = yield* Deferred.make<void>()
      const fiber = yield* slowCallStarted({ cancel: Deferred.await(cancel) })
      yield* Deferred.succeed(cancel, undefined)
      const cancelled = yield* Effect.flip(Fiber.join(fiber))
      expect(cancelled).toMatchObject({ _tag: "ServiceCancelled", tool: "slow", by: "caller" })
      expect(yield* events).toEqual(["slow:cancelled:cancelled by the node"])
    }).pipe(Effect.provide(layer())))

  it.scoped("a process that does not yield after cancellation is killed within the kill bound", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(runtime.call(probe(), {
        tool: "hang",
        input: {},
        onProgress: () => Deferred.succeed(started, undefined)
      }))
      yield* Deferred.await(started)
      const pid = (yield* pidOf(probe().packageId))!
      const stopping = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* armed(2_000)
      expect(alive(pid)).toBe(true) // not before the bound
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(stopping)
      yield* gone(pid)
      yield* eventually("the killed service left", Effect.map(runtime.running, (all) => (all.length === 0 ? true : undefined)))
      // The next call gets a new process.
      const read = yield* runtime.call(probe(), { tool: "read_value", input: { key: "a" } })
      expect(read.isError).toBe(false)
    }).pipe(Effect.provide(layer())))

  it.scoped("stop(packageId) cancels its call over MCP (ServiceCancelled by stop) and ends its process", () => {
    const dataDir = tempDir("clark-services-")
    return Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const fiber = yield* slowCallStarted()
      const pid = (yield* pidOf(probe().packageId))!
      expect(yield* runtime.stop(probe().packageId)).toBe(true)
      const cancelled = yield* Effect.flip(Fiber.join(fiber))
      expect(cancelled).toMatchObject({ _tag: "ServiceCancelled", tool: "slow", by: "stop" })
      yield* gone(pid)
      const log = path.join(dataFolderOf(dataDir, probe().packageId), "events.log")
      expect(fs.readFileSync(log, "utf8")).toBe("slow:cancelled:the service is stopping\n")
      expect(yield* runtime.running).toEqual([])
      expect(yield* runtime.stop(probe().packageId)).toBe(false)
    }).pipe(Effect.provide(layer({ dataDir })))
  })

  it.scoped("a service idle for the idle time is stopped; a call before then keeps it", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      yield* runtime.call(probe(), { tool: "read_value", input: { key: "a" } })
      const pid = (yield* pidOf(probe().packageId))!
      // The service's one idle watcher, armed at its start.
      yield* armed(5 * 60_000)
      yield* TestClock.adjust("4 minutes")
      yield* runtime.call(probe(), { tool: "read_value", input: { key: "a" } })
      // At 5 minutes the watcher finds the last call 1 minute old: it waits the 4 minutes left, no more.
      yield* TestClock.adjust("1 minute")
      yield* armed(4 * 60_000)
      expect(yield* pidOf(probe().packageId)).toBe(pid)
      yield* TestClock.adjust("3 minutes")
      expect(yield* pidOf(probe().packageId)).toBe(pid)
      yield* TestClock.adjust("1 minute")
      yield* gone(pid)
      expect(yield* runtime.running).toEqual([])
    }).pipe(Effect.provide(layer())))

  it.scoped("a call in flight at the idle time keeps its service; the idle time counts from its end", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      yield* runtime.call(probe(), { tool: "read_value", input: { key: "a" } })
      const pid = (yield* pidOf(probe().packageId))!
      yield* armed(5 * 60_000)
      // Its own timeout beyond the test's clock moves, so the call ends only when interrupted.
      const fiber = yield* slowCallStarted({ timeout: "1 hour" })
      yield* TestClock.adjust("5 minutes")
      // Busy at 5 minutes: the watcher looks again a whole idle time later.
      yield* armed(5 * 60_000)
      expect(yield* pidOf(probe().packageId)).toBe(pid)
      expect((yield* runtime.running)[0]?.calls).toBe(1)
      yield* TestClock.adjust("2 minutes")
      yield* Fiber.interrupt(fiber)
      // The call ended at 7 minutes: at 10 the service has been idle 3, so it stays until 12.
      yield* TestClock.adjust("3 minutes")
      yield* armed(2 * 60_000)
      expect(yield* pidOf(probe().packageId)).toBe(pid)
      yield* TestClock.adjust("2 minutes")
      yield* gone(pid)
      expect(yield* runtime.running).toEqual([])
    }).pipe(Effect.provide(layer())))

  it.scoped("the layer's scope closing stops every service at once", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(layer(), scope)
      const runtime = Context.get(context, ServiceRuntime)
      yield* runtime.call(probe(), { tool: "read_value", input: { key: "a" } })
      yield* runtime.call({ ...probe(), packageId: "@clark-tests/probe-copy" }, { tool: "read_value", input: { key: "a" } })
      const pids = (yield* runtime.running).map((service) => service.pid)
      expect(pids).toHaveLength(2)
      yield* Scope.close(scope, Exit.void)
      for (const pid of pids) yield* gone(pid)
    }))

  it.scoped("stopAll (emergency stop) cancels every call and kills a process that does not end within the bound", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const other = { ...probe(), packageId: "@clark-tests/probe-copy" }
      const started = yield* Deferred.make<void>()
      const hanging = yield* Effect.fork(runtime.call(other, {
        tool: "hang",
        input: {},
        onProgress: () => Deferred.succeed(started, undefined)
      }))
      yield* Deferred.await(started)
      const slow = yield* slowCallStarted()
      const pids = (yield* runtime.running).map((service) => service.pid)
      expect(pids).toHaveLength(2)
      const stopping = yield* Effect.fork(runtime.stopAll)
      expect(yield* Effect.flip(Fiber.join(slow))).toMatchObject({ _tag: "ServiceCancelled", by: "stop" })
      expect(yield* Effect.flip(Fiber.join(hanging))).toMatchObject({ _tag: "ServiceCancelled", by: "stop" })
      yield* armed(2_000)
      yield* TestClock.adjust("2 seconds")
      expect(yield* Fiber.join(stopping)).toBe(2)
      for (const pid of pids) yield* gone(pid)
      expect(yield* runtime.running).toEqual([])
    }).pipe(Effect.provide(layer())))

  it.scoped("a call for another digest (an update) replaces the running service", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      yield* runtime.call(probe(), { tool: "write_value", input: { key: "a", value: "one" } })
      const first = (yield* pidOf(probe().packageId))!
      const updated = { ...probe(), digest: "sha256:updated" }
      const read = yield* runtime.call(updated, { tool: "read_value", input: { key: "a" } })
      expect(read.structuredContent).toEqual({ found: false })
      yield* gone(first)
      expect((yield* runtime.running).map((service) => service.digest)).toEqual(["sha256:updated"])
    }).pipe(Effect.provide(layer())))
})
