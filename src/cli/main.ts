/** The `clark` command. */
import { Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Logging } from "./Logging.js"
import { market } from "./Market.js"
import { foldInstallVersion } from "./market/InstallVersion.js"
import { marketplace } from "./Marketplace.js"
import { node } from "./Node.js"

const clark = Command.make("clark").pipe(
  Command.withDescription("Clark: package marketplace, local node and their command line"),
  Command.withSubcommands([marketplace, node, market])
)

const run = Command.run(clark, { name: "clark", version: "0.1.0" })

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

run(foldInstallVersion(process.argv)).pipe(
  Effect.catchAll(reportFailure),
  Effect.provide(Layer.mergeAll(NodeContext.layer, Logging)),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
