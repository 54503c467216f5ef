/**
 * Message rules 1-5 of the spec: what a new message does to the conversation's
 * running turn. A pure decision; the turn engine acts on it.
 */
import type { Channel, Surface } from "../../schema/node/Security.js"

/** How a message arrived: rule 4 treats the waiting route apart from every other way a turn starts. */
export type Route = "wait" | "stream" | "answer"

/** `setup` until the model's first event, `writing` while it answers, `finishing` once it takes no more steering. */
export type Phase = "setup" | "writing" | "finishing"

export interface RunningTurn {
  readonly origin: Surface
  readonly channel: Channel
  readonly phase: Phase
}

export interface Arrival {
  readonly origin: Surface
  readonly channel: Channel
  readonly route: Route
  readonly references: number
  readonly attachments: number
}

/**
 * - `start`: nothing runs or waits, the message is its own turn now;
 * - `steer`: it joins the running turn, which reads it at its next model round;
 * - `wait`: it becomes its own turn once the ones before it end;
 * - `interrupt`: the running turn is stopped and the message goes first.
 */
export type Steering = "start" | "steer" | "wait" | "interrupt"

export const decide = (running: RunningTurn | undefined, waiting: number, message: Arrival): Steering => {
  if (running === undefined) return waiting === 0 ? "start" : "wait"
  // Rule 2: another origin, or typed text during a spoken turn (or the reverse), never joins it.
  const sameVoice = running.origin === message.origin && running.channel === message.channel
  // Rule 5: a turn being set up is never stopped or steered; `finishing` takes no more prompts either.
  if (!sameVoice || running.phase !== "writing") return "wait"
  const bare = message.references === 0 && message.attachments === 0
  // Rule 4: bare text of the same voice is steered in, whatever the route.
  if (bare) return "steer"
  // Rule 3: only the waiting route interrupts, and only for a message that carries references.
  if (message.route === "wait" && message.references > 0) return "interrupt"
  return "wait"
}
