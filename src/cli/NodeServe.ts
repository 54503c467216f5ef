/** `clark node serve`: run the local node on a data dir. What it runs is in node/Serve.ts, loaded when it runs. */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as os from "node:os"
import * as path from "node:path"
import { modelApis } from "../../layers/node/model/Select.js"
import { load } from "./Lazy.js"

export const DataDirConfig = Config.string("CC_DATA_DIR").pipe(
  Config.withDefault(path.join(os.homedir(), ".clark", "node"))
)

export const dataDirOption = Options.directory("data-dir").pipe(
  Options.withDescription("the node's data dir (default: CC_DATA_DIR, else ~/.clark/node)"),
  Options.optional
)

export const resolveDataDir = (option: Option.Option<string>) =>
  Option.match(option, { onNone: () => DataDirConfig, onSome: (dir) => Effect.succeed(dir) })

export const serveOptions = {
  dataDir: dataDirOption,
  host: Options.text("host").pipe(Options.withDescription("default: CC_HOST, else 127.0.0.1"), Options.optional),
  port: Options.integer("port").pipe(Options.withDescription("default: CC_PORT, else 8788"), Options.optional),
  model: Options.text("model").pipe(
    Options.withDescription("openai:MODEL, anthropic:MODEL or scripted:FILE; none means no model"),
    Options.optional
  ),
  modelBaseUrl: Options.text("model-base-url").pipe(
    Options.withDescription("base URL of the OpenAI-compatible server (default: CC_MODEL_BASE_URL)"),
    Options.optional
  ),
  modelApi: Options.choice("model-api", modelApis).pipe(
    Options.withDescription(
      "wire API of openai:MODEL: chat (Chat Completions) or responses (default: CC_MODEL_API, else chat)"
    ),
    Options.optional
  )
}

export type ServeOptions = Command.Command.ParseConfig<typeof serveOptions>

export const serve = Command.make(
  "serve",
  serveOptions,
  (options) => load(() => import("./node/Serve.js"), (Serve) => Serve.run(options))
).pipe(Command.withDescription("Run the local node"))
