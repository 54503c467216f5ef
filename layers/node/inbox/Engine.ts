/** The engine's versions as the host application passes them at launch (docs/decisions.md, "Inbox remainders"). */
import { Config, ConfigError, Either, Option } from "effect"
import { type EngineVersions, isEngineVersion } from "../../../services/node/Notices.js"

/**
 * CC_ENGINE_VERSION and CC_ENGINE_NEWEST, set together by the host application when it launches the node (both
 * unset: no engine notices). One without the other, or a value that is not a version, fails the start.
 */
export const EngineConfig: Config.Config<EngineVersions | null> = Config.all({
  running: Config.option(Config.string("CC_ENGINE_VERSION")),
  newest: Config.option(Config.string("CC_ENGINE_NEWEST"))
}).pipe(
  Config.mapOrFail(({ newest, running }) => {
    if (Option.isNone(running) && Option.isNone(newest)) return Either.right(null)
    if (Option.isNone(running) || Option.isNone(newest)) {
      return Either.left(ConfigError.MissingData([], "CC_ENGINE_VERSION and CC_ENGINE_NEWEST are set together"))
    }
    if (!isEngineVersion(running.value) || !isEngineVersion(newest.value)) {
      return Either.left(ConfigError.InvalidData([], "CC_ENGINE_VERSION and CC_ENGINE_NEWEST must be versions such as 1.4.0"))
    }
    return Either.right({ running: running.value, newest: newest.value })
  })
)

