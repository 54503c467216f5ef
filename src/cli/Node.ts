/** `clark node …`: run the local node and talk to it. */
import { Command } from "@effect/cli"
import { conversations, send, stop } from "./NodeClient.js"
import { serve } from "./NodeServe.js"

export const node = Command.make("node").pipe(
  Command.withDescription("The local assistant node"),
  Command.withSubcommands([serve, conversations, send, stop])
)
