/** `clark node …`: run the local node and talk to it. */
import * as Command from "@effect/cli/Command"
import { conversations, send, stop } from "./NodeClient.js"
import { install, packagesCommand } from "./NodePackages.js"
import { serve } from "./NodeServe.js"

export const node = Command.make("node").pipe(
  Command.withDescription("The local assistant node"),
  Command.withSubcommands([serve, conversations, send, stop, packagesCommand, install])
)
