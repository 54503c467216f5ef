/** Message rules 1-5 as a table: what a new message does, given the running turn and how the message arrived. */
import { describe, expect, it } from "@effect/vitest"
import type { Channel, Surface } from "../../schema/node/Security.js"
import { type Arrival, decide, type Phase, type Route, type RunningTurn, type Steering } from "../../services/node/Steering.js"

const turn = (origin: Surface, channel: Channel, phase: Phase): RunningTurn => ({ origin, channel, phase })
const message = (
  origin: Surface,
  channel: Channel,
  route: Route,
  references = 0,
  attachments = 0
): Arrival => ({ origin, channel, route, references, attachments })

const cases: ReadonlyArray<readonly [string, RunningTurn | undefined, number, Arrival, Steering]> = [
  ["nothing runs or waits: the message starts its turn", undefined, 0, message("person", "text", "wait"), "start"],
  ["nothing runs but others wait: it queues behind them", undefined, 1, message("person", "text", "stream"), "wait"],
  ["rule 4: bare text, same origin and channel, while writing: steered", turn("person", "text", "writing"), 0, message("person", "text", "stream"), "steer"],
  ["rule 4: also on the waiting route", turn("cli-api", "text", "writing"), 0, message("cli-api", "text", "wait"), "steer"],
  ["rule 4: also an answered question", turn("person", "text", "writing"), 0, message("person", "text", "answer"), "steer"],
  ["rule 2: another origin waits", turn("person", "text", "writing"), 0, message("cli-api", "text", "wait"), "wait"],
  ["rule 2: typed text during a spoken turn waits", turn("person", "voice", "writing"), 0, message("person", "text", "stream"), "wait"],
  ["rule 2: speech during a typed turn waits", turn("person", "text", "writing"), 0, message("person", "voice", "stream"), "wait"],
  ["rule 2: another origin with references never interrupts", turn("person", "text", "writing"), 0, message("mcp", "text", "wait", 1), "wait"],
  ["rule 5: a turn being set up is never steered", turn("person", "text", "setup"), 0, message("person", "text", "stream"), "wait"],
  ["rule 5: a turn being set up is never interrupted", turn("person", "text", "setup"), 0, message("person", "text", "wait", 2), "wait"],
  ["a finishing turn takes no more prompts", turn("person", "text", "finishing"), 0, message("person", "text", "stream"), "wait"],
  ["rule 3: references on the waiting route interrupt", turn("person", "text", "writing"), 0, message("person", "text", "wait", 1), "interrupt"],
  ["rule 3: references on the waiting route interrupt even with attachments", turn("person", "text", "writing"), 0, message("person", "text", "wait", 1, 2), "interrupt"],
  ["rule 4: references on the streaming route wait", turn("person", "text", "writing"), 0, message("person", "text", "stream", 1), "wait"],
  ["rule 4: references with an answered question wait", turn("person", "text", "writing"), 0, message("person", "text", "answer", 1), "wait"],
  ["attachments alone never interrupt: they wait", turn("person", "text", "writing"), 0, message("person", "text", "wait", 0, 1), "wait"],
  ["attachments on the streaming route wait", turn("person", "text", "writing"), 0, message("person", "text", "stream", 0, 1), "wait"],
  ["bare text steers even when others wait behind the turn", turn("person", "text", "writing"), 2, message("person", "text", "stream"), "steer"]
]

describe("steering decision", () => {
  it.each(cases)("%s", (_, running, waiting, arrival, expected) => {
    expect(decide(running, waiting, arrival)).toBe(expected)
  })
})
