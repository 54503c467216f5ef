/**
 * `clark node conversations|send|stop`: talk to a running node as the command-line api. The commands and
 * their options are described here; what they run is in node/Client.ts, loaded when one runs.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { load } from "./Lazy.js"
import { dataDirOption } from "./NodeServe.js"

export const defaultNodeUrl = "http://127.0.0.1:8788"

const urlOption = Options.text("url").pipe(
  Options.withDescription(`the node's base URL (default: CLARK_NODE_URL, else ${defaultNodeUrl})`),
  Options.optional
)

const jsonOption = Options.boolean("json").pipe(Options.withDescription("print the raw JSON result"))

/** The options every command shares. */
export const connection = { dataDir: dataDirOption, url: urlOption, json: jsonOption }
export type ConnectionOptions = Command.Command.ParseConfig<typeof connection>

const client = () => import("./node/Client.js")

const list = Command.make("list", connection, (options) => load(client, (Client) => Client.list(options))).pipe(
  Command.withDescription("List the node's conversations")
)

const createOptions = {
  ...connection,
  title: Options.text("title").pipe(Options.withDescription("the conversation's title"), Options.optional)
}
export type CreateOptions = Command.Command.ParseConfig<typeof createOptions>

const create = Command.make("create", createOptions, (options) => load(client, (Client) => Client.create(options)))
  .pipe(Command.withDescription("Create a conversation and print its id"))

export const conversations = Command.make("conversations").pipe(
  Command.withDescription("The node's conversations"),
  Command.withSubcommands([list, create])
)

const sendOptions = {
  ...connection,
  stream: Options.boolean("stream").pipe(Options.withDescription("print the reply as it is written")),
  conversation: Args.text({ name: "CONVERSATION" }).pipe(Args.withDescription("the conversation's id")),
  text: Args.text({ name: "TEXT" }).pipe(Args.withDescription("the message"))
}
export type SendOptions = Command.Command.ParseConfig<typeof sendOptions>

export const send = Command.make("send", sendOptions, (options) => load(client, (Client) => Client.send(options))).pipe(
  Command.withDescription(
    "Send a message to a conversation and print the reply. Exits 1 when the reply failed, was stopped or was cancelled"
  )
)

const stopOptions = {
  ...connection,
  conversation: Args.text({ name: "CONVERSATION" }).pipe(
    Args.withDescription("the conversation whose reply to stop; without it, everything running stops"),
    Args.optional
  )
}
export type StopOptions = Command.Command.ParseConfig<typeof stopOptions>

export const stop = Command.make("stop", stopOptions, (options) => load(client, (Client) => Client.stop(options))).pipe(
  Command.withDescription("Stop a reply, or everything running on the node. With a conversation, only its reply.")
)
