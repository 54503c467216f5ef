/** The `clark` command. */
import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Logging } from "./Logging.js"
import { marketplace } from "./Marketplace.js"
import { node } from "./Node.js"

const clark = Command.make("clark").pipe(
  Command.withDescription("Clark: package marketplace, local node and their command line"),
  Command.withSubcommands([marketplace, node])
)

const run = Command.run(clark, { name: "clark", version: "0.1.0" })

run(process.argv).pipe(
  Effect.provide(Layer.mergeAll(NodeContext.layer, Logging)),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
