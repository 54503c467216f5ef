/** Health of the service. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { DateTimeString } from "../common/Text.js"

export const Environment = Schema.Literal("development", "staging", "production")
export type Environment = typeof Environment.Type

export const Health = Schema.Struct({
  status: Schema.Literal("ok", "degraded"),
  environment: Environment,
  checkedAt: DateTimeString,
  checks: Schema.Struct({ database: Schema.Literal("ok", "error") })
}).annotations({ identifier: "Health" })
export type Health = typeof Health.Type

/** A failing dependency: answered 503 with the Health body itself, not an error envelope. */
export class Unhealthy extends Schema.TaggedError<Unhealthy>()("Unhealthy", { health: Health }) {}

export const UnhealthyWire = Schema.transform(Health, Unhealthy, {
  strict: true,
  decode: (health) => ({ _tag: "Unhealthy" as const, health }),
  encode: ({ health }) => health
}).annotations({ ...HttpApiSchema.annotations({ status: 503 }), identifier: "HealthDegraded" })
