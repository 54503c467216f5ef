/** Settings of the marketplace server, read from the environment. */
import { Config, Context, Layer } from "effect"
import type { Environment } from "../../schema/marketplace/System.js"

export class Settings extends Context.Tag("clark/marketplace/Settings")<Settings, {
  readonly environment: Environment
}>() {}

export const SettingsConfig = Config.all({
  environment: Config.literal("development", "staging", "production")("MARKETPLACE_ENVIRONMENT").pipe(
    Config.withDefault("development" as const)
  )
})

export const layer = Layer.effect(Settings, SettingsConfig)
