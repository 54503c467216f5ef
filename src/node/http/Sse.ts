/**
 * Server-Sent Events of a turn, on Effect Streams: `id: <taskId>:<seq>` so a
 * client can resume with Last-Event-ID.
 */
import { Sse } from "@effect/experimental"
import { HttpBody, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { ServerResponse } from "node:http"
import type { Socket } from "node:net"
import type { EventWriter, Ticket, TurnEvent } from "../../../services/node/TurnEngine.js"

export const encodeEvent = (event: TurnEvent): string =>
  Sse.encoder.write({
    _tag: "Event",
    id: event.taskId === null ? undefined : `${event.taskId}:${event.seq}`,
    event: event.event,
    data: JSON.stringify(event.data)
  })

const utf8 = new TextEncoder()

/**
 * Sent first, so the headers leave even when the turn has nothing to say yet (a waiting message). Not uncorked:
 * Node sends it with the headers once the microtasks queued now have run, and a turn that starts with the request
 * says its first event within them, so the head, this comment and that event leave in one socket write (each
 * write to a loopback socket costs the kernel's send path, about as much CPU as a stage of the stream).
 */
const opening = utf8.encode(": connected\n\n")

/**
 * The SSE bytes of a turn's events: each piece of events that arrived together encoded as one write, by the
 * follower's own channel step (Ticket.written). The response asks for its next piece only after writing the
 * previous one, and that is where the socket is uncorked: Node's `ServerResponse.write` corks it and uncorks it on
 * `process.nextTick`, which runs only once the microtask queue is empty; with Effect's scheduler running every ready
 * fiber in microtasks, an event would otherwise wait for all of that work (other turns starting, SQL) to leave.
 * A piece that ends with `done` is the last and is not uncorked: the response's end follows it at once and sends
 * both in one write.
 */
const writer = (socket: Socket | undefined): EventWriter<Uint8Array> => ({
  opening,
  write: (events) => {
    let text = ""
    for (const event of events) text += encodeEvent(event)
    return utf8.encode(text)
  },
  taken: socket === undefined ? undefined : () => {
    if (socket.writableCorked) socket.uncork()
  }
})

/**
 * The response's status and headers, content type included, made once. `HttpServerResponse.stream(body, {
 * contentType, headers })` copies the headers into a new object with a spread and then sets the content type on it
 * (`{ ...headers }`, then a property: a hidden class of its own per response on this V8, docs/decisions.md); a
 * body with an empty content type keeps these headers as they are, and Node writes them.
 */
const head = HttpServerResponse.empty({
  status: 200,
  headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" }
})

/**
 * The response that follows a turn. The stream runs on the request's fiber: a client that leaves interrupts it, and
 * with it only its own follower; the turn goes on.
 */
export const response = (ticket: Pick<Ticket, "written">) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    // Undefined when the request did not come through Node's HTTP server.
    const socket = (NodeHttpServerRequest.toServerResponse(request) as ServerResponse | undefined)?.socket ?? undefined
    return HttpServerResponse.setBody(head, HttpBody.stream(ticket.written(writer(socket)), ""))
  })
