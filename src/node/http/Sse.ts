/** Server-Sent Events of a turn: `id: <taskId>:<seq>` so a client can resume with Last-Event-ID. */
import { HttpServerResponse } from "@effect/platform"
import { Option, Stream } from "effect"
import type { TurnEvent } from "../../../services/node/TurnEngine.js"

const encoder = new TextEncoder()

export const encodeEvent = (event: TurnEvent): Uint8Array =>
  encoder.encode(`id: ${event.taskId}:${event.seq}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`)

/** Sent first, so the headers leave at once even when the turn has nothing to say yet (a waiting message). */
const opening = encoder.encode(": connected\n\n")

export const response = (events: Stream.Stream<TurnEvent>) =>
  HttpServerResponse.stream(
    // No periodic keep-alive: the stream is on loopback to the host app, and merging a timer into every
    // stream cost about a third of the node's time per delta.
    Stream.concat(Stream.succeed(opening), Stream.map(events, encodeEvent)),
    {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    }
  )

/** `<taskId>:<seq>` from a Last-Event-ID header. */
export const parseLastEventId = (value: string | undefined): Option.Option<{ taskId: string; seq: number }> => {
  const match = value === undefined ? null : /^(task_[A-Za-z0-9_-]{1,64}):(\d{1,9})$/.exec(value)
  return match === null ? Option.none() : Option.some({ taskId: match[1]!, seq: Number(match[2]) })
}
