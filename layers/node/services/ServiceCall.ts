/**
 * One tool call on a running service: progress handed to the caller in order, the answer or what kept it,
 * and what happens when the node stops waiting (interruption, timeout, the caller's cancel): MCP
 * cancellation, then proof within the kill bound that the process still listens, or SIGKILL.
 */
import "./ZodJitless.js" // before the SDK: its schemas are made when it loads
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { randomUUID } from "node:crypto"
import { Deferred, Duration, Effect, Fiber, FiberRef, Queue, Ref } from "effect"
import {
  ServiceCancelled,
  type ServiceCallError,
  ServiceTimedOut,
  ServiceToolFailed
} from "../../../services/node/ServiceErrors.js"
import type { ServiceCall, ServiceProgress, ServiceToolResult } from "../../../services/node/ServiceRuntime.js"
import { CallSignal } from "./CallSignal.js"
import type { Deadlines } from "./Deadlines.js"
import { sdkTimeoutMillis, type ServiceProcess } from "./ServiceProcess.js"

export interface CallOptions {
  readonly timeout: Duration.Duration
  readonly killAfter: Duration.Duration
  /** Set when the node is stopping this service: a call it cuts off was cancelled, not crashed. */
  readonly stopping: Ref.Ref<boolean>
  /** Where the call's timeout is armed: the runtime's, shared by its calls. */
  readonly deadlines: Deadlines
}

const drained = Symbol("drained")
/** What a request fails with when its deadline passed first. */
const expired = Symbol("expired")

/** A call's deadline: `due` once its time is up; `expire` ends the request in flight, when there is one. */
interface Deadline {
  due: boolean
  expire: (() => void) | undefined
}

const detailOf = (message: string) => (message.length > 500 ? `${message.slice(0, 500)}…` : message)

/**
 * After a cancellation the SDK's server sends nothing for the call, so the node cannot see the handler
 * stop. What it can see is whether the process still reads its input: a ping sent after the cancellation
 * is answered only once the process has taken the cancellation in. No answer within the bound means the
 * process is wedged (a handler that never yields the event loop ignores cancellation by force): SIGKILL.
 */
export const settle = (service: ServiceProcess, killAfter: Duration.Duration) =>
  Effect.tryPromise((signal) => service.client.ping({ signal, timeout: sdkTimeoutMillis })).pipe(
    // This runs as an interruption's finalizer, which is uninterruptible: the wait itself must not be, or
    // the bound could not cut it short.
    Effect.interruptible,
    Effect.timeout(killAfter),
    Effect.catchAll(() =>
      Effect.flatMap(Deferred.isDone(service.exited), (gone) =>
        gone ? Effect.void : Effect.zipRight(
          Effect.logWarning("service did not yield after cancellation: killed", { packageId: service.pkg.packageId }),
          service.kill
        ))
    ),
    Effect.asVoid,
    Effect.uninterruptible
  )

const toResult = (answer: Record<string, unknown>): ServiceToolResult | undefined => {
  if (!Array.isArray(answer.content)) return undefined
  const structured = answer.structuredContent
  return {
    content: answer.content as ServiceToolResult["content"],
    ...(typeof structured === "object" && structured !== null && !Array.isArray(structured)
      ? { structuredContent: structured as Record<string, unknown> }
      : {}),
    isError: answer.isError === true
  }
}

/** The exchange of one call, progress handed to `progress` when the caller asked for it. */
const exchange = (
  service: ServiceProcess,
  call: ServiceCall,
  options: CallOptions,
  progress: Queue.Queue<ServiceProgress | typeof drained> | undefined
): Effect.Effect<ServiceToolResult, ServiceCallError> => {
  const { packageId } = service.pkg
  const tool = call.tool

  /**
   * The request, answered by the service or ended by the call's deadline (`timed` below).
   */
  const send = (deadline: Deadline) => Effect.async<Record<string, unknown>, unknown>((resume) => {
    if (deadline.due) return resume(Effect.fail(expired))
    let settled = false
    const controller = new CallSignal()
    const token = progress === undefined ? undefined : `clark-${randomUUID()}`
    const stopProgress = token === undefined ? () => undefined : service.onProgress(token, (p) => {
      Queue.unsafeOffer(progress!, p)
    })
    const untrack = service.track(controller)
    const end = () => {
      settled = true
      stopProgress()
      untrack()
    }
    service.client.callTool({
      name: tool,
      arguments: { ...call.input },
      ...(token === undefined ? {} : { _meta: { progressToken: token } })
    }, undefined, { signal: controller.signal, timeout: sdkTimeoutMillis }).then(
      (answer) => {
        // Answered or failed on its own: nothing left to cancel (an abort has already dropped the listener).
        controller.release()
        if (settled) return
        end()
        resume(Effect.succeed(answer as Record<string, unknown>))
      },
      (error: unknown) => {
        controller.release()
        if (settled) return
        end()
        resume(Effect.fail(error))
      }
    )
    deadline.expire = () => {
      if (settled) return
      end()
      controller.abort("cancelled by the node")
      resume(Effect.fail(expired))
    }
    // The SDK sends `notifications/cancelled` for the request when its signal aborts.
    return Effect.sync(() => {
      end()
      controller.abort("cancelled by the node")
    })
  })

  /**
   * The call's deadline on the runtime's Deadlines (no fiber of its own): when it is due, it ends the request the
   * way an interruption would (abort, so the SDK sends `notifications/cancelled`) and resumes it with `expired`;
   * whichever comes first settles the request, the other finds it settled. Disarmed when the call ends.
   */
  const timed = Effect.suspend(() => {
    const deadline: Deadline = { due: false, expire: undefined }
    return Effect.flatMap(
      options.deadlines.arm(Duration.toMillis(options.timeout), () => {
        deadline.due = true
        deadline.expire?.()
      }),
      (disarm) => Effect.ensuring(send(deadline), disarm)
    )
  })

  const failure = (error: unknown) =>
    Effect.gen(function*() {
      if (yield* Ref.get(options.stopping)) return new ServiceCancelled({ packageId, tool, by: "stop" })
      if (error instanceof McpError) {
        return error.code === ErrorCode.ConnectionClosed
          ? new ServiceToolFailed({ packageId, tool, reason: "crashed" })
          : new ServiceToolFailed({ packageId, tool, reason: "error", detail: detailOf(error.message) })
      }
      if (error instanceof Error && error.name === "ZodError") {
        return new ServiceToolFailed({ packageId, tool, reason: "invalid-answer" })
      }
      const gone = yield* Deferred.isDone(service.exited)
      return new ServiceToolFailed({
        packageId,
        tool,
        reason: gone ? "crashed" : "error",
        ...(gone ? {} : { detail: detailOf(error instanceof Error ? error.message : String(error)) })
      })
    })

  const answered = timed.pipe(
    Effect.onInterrupt(() => settle(service, options.killAfter)),
    Effect.catchAll((error): Effect.Effect<never, ServiceCallError> =>
      error === expired
        // As an interrupted call does: the cancellation taken in (or the process killed) before answering.
        ? Effect.zipRight(
          settle(service, options.killAfter),
          Effect.fail(new ServiceTimedOut({ packageId, tool, timeoutMillis: Duration.toMillis(options.timeout) }))
        )
        : Effect.flatMap(failure(error), Effect.fail)
    ),
    Effect.flatMap((answer) => {
      const result = toResult(answer)
      return result === undefined
        ? Effect.fail(new ServiceToolFailed({ packageId, tool, reason: "invalid-answer" }))
        : Effect.succeed(result)
    })
  )
  const cancel = call.cancel
  return cancel === undefined
    ? answered
    : Effect.raceFirst(answered, Effect.zipRight(cancel, Effect.fail(new ServiceCancelled({ packageId, tool, by: "caller" }))))
}

export const invoke = (
  service: ServiceProcess,
  call: ServiceCall,
  options: CallOptions
): Effect.Effect<ServiceToolResult, ServiceCallError> => {
  const onProgress = call.onProgress
  // A call without progress (every turn's call) needs no queue, no handing fiber and no scope for them.
  const run = onProgress === undefined ? exchange(service, call, options, undefined) : Effect.scoped(Effect.gen(function*() {
    const progress = yield* Queue.unbounded<ServiceProgress | typeof drained>()
    // One fiber hands progress over in arrival order. Notifications come before their answer, so the call
    // lets it finish what arrived before answering; an interrupted call does not wait for it.
    const handing = yield* Queue.take(progress).pipe(
      Effect.flatMap((p) => p === drained ? Effect.succeed(true) : Effect.as(Effect.catchAllCause(onProgress(p), () => Effect.void), false)),
      Effect.repeat({ until: (done) => done }),
      Effect.forkScoped
    )
    const outcome = yield* Effect.exit(exchange(service, call, options, progress))
    yield* Queue.offer(progress, drained).pipe(Effect.zipRight(Fiber.join(handing)))
    return yield* outcome
  }))
  // No stack trace captured for the span (a `new Error()` per call): its name and attributes say which call. With
  // tracing off (CLARK_TRACING, the default) no span at all: a no-op span still set itself as the parent span, a
  // copy of the caller's whole context (60-odd services) per call.
  return Effect.withFiberRuntime((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled)
      ? run.pipe(Effect.withSpan("ServiceRuntime.call", {
        attributes: { packageId: service.pkg.packageId, tool: call.tool },
        captureStackTrace: false
      }))
      : run
  )
}
