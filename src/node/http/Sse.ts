/**
 * Server-Sent Events of a turn, on Effect Streams: `id: <taskId>:<seq>` so a
 * client can resume with Last-Event-ID.
 */
import { Sse } from "@effect/experimental"
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Channel, Chunk, Effect, Stream } from "effect"
import type { ServerResponse } from "node:http"
import type { Socket } from "node:net"
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
const opening = utf8.encode(": connected\n\n")

/**
 * Node's `ServerResponse.write` corks the socket and uncorks it on `process.nextTick`, which runs only once the
 * microtask queue is empty: with Effect's scheduler running every ready fiber in microtasks, an event would wait
 * for all of that work (other turns starting, SQL) before it left. This stage passes each chunk on and, when the
 * response asks for the next one (so after it wrote this one), uncorks the socket: the bytes leave at once.
 */
const uncorkAfterWrite = (socket: Socket | undefined) => {
  const loop: Channel.Channel<Chunk.Chunk<Uint8Array>, Chunk.Chunk<Uint8Array>, never, never, unknown, unknown> = Channel
    .readWithCause({
      onInput: (chunk: Chunk.Chunk<Uint8Array>) =>
        Channel.zipRight(
          Channel.write(chunk),
          Channel.suspend(() => {
            if (socket?.writableCorked) socket.uncork()
            return loop
          })
        ),
      onFailure: Channel.failCause,
      onDone: Channel.succeed
    })
  return loop
}

/**
 * The response that follows a turn: its events SSE-encoded, each chunk of events that arrived together written as
 * one piece. The stream runs on the request's fiber: a client that leaves interrupts it and with it only its own
 * subscription; the turn goes on.
 */
export const response = (events: Stream.Stream<TurnEvent>) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    // Undefined when the request did not come through Node's HTTP server.
    const socket = (NodeHttpServerRequest.toServerResponse(request) as ServerResponse | undefined)?.socket ?? undefined
    const bytes = events.pipe(
      Stream.mapChunks((chunk) => Chunk.of(utf8.encode(Chunk.join(Chunk.map(chunk, encodeEvent), "")))),
      Stream.prepend(Chunk.of(opening)),
      Stream.pipeThroughChannel(uncorkAfterWrite(socket))
    )
    return HttpServerResponse.stream(bytes, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })
