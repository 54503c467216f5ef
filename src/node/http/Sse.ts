/**
 * Server-Sent Events of a turn, on Effect Streams: `id: <taskId>:<seq>` so a
 * client can resume with Last-Event-ID.
 */
import { Sse } from "@effect/experimental"
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Chunk, Effect, Stream } from "effect"
import type { ServerResponse } from "node:http"
import type { TurnEvent } from "../../../services/node/TurnEngine.js"

export const encodeEvent = (event: TurnEvent): string =>
  Sse.encoder.write({
    _tag: "Event",
    id: event.taskId === null ? undefined : `${event.taskId}:${event.seq}`,
    event: event.event,
    data: JSON.stringify(event.data)
  })

const utf8 = new TextEncoder()

/** Sent first, so the headers leave at once even when the turn has nothing to say yet (a waiting message). */
const opening = Chunk.of(utf8.encode(": connected\n\n"))

/**
 * The response that follows a turn: its events SSE-encoded, the events that arrived together written as one piece.
 * The stream runs on the request's fiber: a client that leaves interrupts it, and with it only its own subscription;
 * the turn goes on.
 *
 * The bytes are one step pulling from the events: the response asks it for the next piece only after writing the
 * previous one, and that is where it uncorks the socket. Node's `ServerResponse.write` corks the socket and uncorks
 * it on `process.nextTick`, which runs only once the microtask queue is empty; with Effect's scheduler running every
 * ready fiber in microtasks, an event would otherwise wait for all of that work (other turns starting, SQL) before
 * it left.
 */
export const response = (events: Stream.Stream<TurnEvent>) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    // Undefined when the request did not come through Node's HTTP server.
    const socket = (NodeHttpServerRequest.toServerResponse(request) as ServerResponse | undefined)?.socket ?? undefined
    const bytes = Stream.unwrapScoped(Effect.map(Stream.toPull(events), (next) => {
      let opened = false
      return Stream.repeatEffectChunkOption(Effect.suspend(() => {
        if (!opened) {
          opened = true
          return Effect.succeed(opening)
        }
        if (socket?.writableCorked) socket.uncork()
        return Effect.map(next, (chunk) => Chunk.of(utf8.encode(Chunk.join(Chunk.map(chunk, encodeEvent), ""))))
      }))
    }))
    return HttpServerResponse.stream(bytes, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })
