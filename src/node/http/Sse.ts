/** Server-Sent Events of a turn: `id: <taskId>:<seq>` so a client can resume with Last-Event-ID. */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Fiber, Option, Runtime } from "effect"
import type { ServerResponse } from "node:http"
import { Readable } from "node:stream"
import type { EventSink, TurnEvent } from "../../../services/node/TurnEngine.js"

export const encodeEvent = (event: TurnEvent): string =>
  `id: ${event.taskId}:${event.seq}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`

/** Sent first, so the headers leave at once even when the turn has nothing to say yet (a waiting message). */
const opening = ": connected\n\n"

/**
 * A client that reads this far behind is cut off rather than buffered without end; it can resume with
 * Last-Event-ID.
 */
const maxBuffered = 4 * 1024 * 1024

/**
 * The response that follows a turn. Events are written into a Node stream that the server pipes to the socket, from
 * the turn's own fiber: no Stream stage or fiber wake-up per event (docs/decisions.md, "The node's hot path"). The
 * follower runs on its own fiber, so the handler answers at once; a client that leaves interrupts only that fiber.
 *
 * Node's `ServerResponse.write` corks the socket and uncorks it on `process.nextTick`, which runs only once the
 * microtask queue is empty: with Effect's scheduler running every ready fiber in microtasks, an event would wait
 * for all of that work (other turns starting, SQL) before it left. The sink uncorks the socket itself right after
 * the event is written, so its bytes are sent before the turn's fiber does anything else.
 */
export const response = (follow: (sink: EventSink) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    // Undefined when the request did not come through Node's HTTP server.
    const socket = (NodeHttpServerRequest.toServerResponse(yield* HttpServerRequest.HttpServerRequest) as
      | ServerResponse
      | undefined)?.socket
    const body = new Readable({ read() {} })
    body.push(opening)
    const sink: EventSink = (event) => {
      if (body.destroyed) return
      if (body.readableLength > maxBuffered) body.destroy()
      else {
        body.push(encodeEvent(event))
        if (socket?.writableCorked) socket.uncork()
      }
    }
    const fiber = Runtime.runFork(runtime)(follow(sink))
    fiber.addObserver(() => {
      if (!body.destroyed) body.push(null)
    })
    body.once("close", () => Runtime.runFork(runtime)(Fiber.interrupt(fiber)))
    return HttpServerResponse.raw(body, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })

/** `<taskId>:<seq>` from a Last-Event-ID header. */
export const parseLastEventId = (value: string | undefined): Option.Option<{ taskId: string; seq: number }> => {
  const match = value === undefined ? null : /^(task_[A-Za-z0-9_-]{1,64}):(\d{1,9})$/.exec(value)
  return match === null ? Option.none() : Option.some({ taskId: match[1]!, seq: Number(match[2]) })
}
