/**
 * The `clark` command. Only the commands' descriptions are loaded here; what a command runs is imported
 * when it runs (Lazy.ts), and `bin/clark.js` answers `--version` before loading this at all.
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Help from "./Help.js"
import { Logging } from "./Logging.js"
import { market } from "./Market.js"
import { foldInstallVersion } from "./market/InstallVersion.js"
import { marketplace } from "./Marketplace.js"
import { node } from "./Node.js"

export const version = "0.1.0"

const clark = Command.make("clark").pipe(
  Command.withDescription("Clark: package marketplace, local node and their command line"),
  Command.withSubcommands([marketplace, node, market])
)

const run = Command.run(clark, { name: "clark", version })

/** An expected failure prints its message (no stack) and exits non-zero; the CLI itself reports bad arguments. */
const reportFailure = (error: unknown) =>
  Effect.zipRight(
    ValidationError.isValidationError(error)
      ? Effect.void
      : Console.error(error instanceof Error ? error.message : String(error)),
    Effect.sync(() => {
      process.exitCode = 1
    })
  )

const argv = foldInstallVersion(process.argv)
// Help pages are written by Help.ts, not by @effect/cli (see there why).
const help = Help.requested(Help.commandTree(clark), argv.slice(2))

if (help?._tag === "Help") {
  process.stdout.write(help.page)
} else if (help?._tag === "UnknownCommand") {
  process.stderr.write(`${help.message}\n`)
  process.exitCode = 1
} else {
  run(argv).pipe(
    Effect.catchAll(reportFailure),
    Effect.provide(Layer.mergeAll(NodeContext.layer, Logging)),
    NodeRuntime.runMain({ disableErrorReporting: false })
  )
}
