/** The turn engine's settings, read from the environment (README, Configuration). */
import { Config, Duration } from "effect"

export const TurnSettings = Config.all({
  /** A single turn stops after this long (spec: 5 minutes by default). */
  wallClock: Config.duration("CC_MODEL_MAX_WALL_CLOCK_MS").pipe(
    Config.orElse(() => Config.integer("CC_MODEL_MAX_WALL_CLOCK_MS").pipe(Config.map(Duration.millis))),
    Config.withDefault(Duration.minutes(5))
  ),
  /** How long the streaming turn waits for the app to answer a host-control before calling it unconfirmed. */
  hostControlWait: Config.integer("CC_HOST_CONTROL_WAIT_MS").pipe(
    Config.map(Duration.millis),
    Config.withDefault(Duration.seconds(5))
  ),
  /** How long an unanswered question stays open. */
  questionTtl: Config.integer("CC_QUESTION_TTL_MS").pipe(Config.map(Duration.millis), Config.withDefault(Duration.hours(24))),
  /** How long POST /messages waits before answering 202 and leaving the turn to run in the background. */
  waitBudget: Config.integer("CC_WAIT_ROUTE_MS").pipe(Config.map(Duration.millis), Config.withDefault(Duration.seconds(60)))
})
export type TurnSettings = Config.Config.Success<typeof TurnSettings>
