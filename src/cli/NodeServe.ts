/** `clark node serve`: run the local node on a data dir. */
import { Command, Options } from "@effect/cli"
import { Config, Console, Effect, Layer, Option, Redacted } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { generateAppSecret } from "../../layers/node/fs/Identity.js"
import * as Scripted from "../../layers/node/model/Scripted.js"
import { layerFromSpec, ModelConfig, modelApis } from "../../layers/node/model/Select.js"
import * as Server from "../node/Server.js"

export const DataDirConfig = Config.string("CC_DATA_DIR").pipe(
  Config.withDefault(path.join(os.homedir(), ".clark", "node"))
)

export const dataDirOption = Options.directory("data-dir").pipe(
  Options.withDescription("the node's data dir (default: CC_DATA_DIR, else ~/.clark/node)"),
  Options.optional
)

export const resolveDataDir = (option: Option.Option<string>) =>
  Option.match(option, { onNone: () => DataDirConfig, onSome: (dir) => Effect.succeed(dir) })

export const serve = Command.make("serve", {
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
}, (options) =>
  Effect.gen(function*() {
    const dataDir = path.resolve(yield* resolveDataDir(options.dataDir))
    const listen = yield* Server.ListenConfig
    const modelConfig = yield* ModelConfig
    const configuredSecret = yield* Config.option(Config.redacted("CC_APP_SECRET"))
    const appSecret = Option.getOrElse(
      Option.filter(configuredSecret, (s) => Redacted.value(s).length > 0),
      generateAppSecret
    )
    if (Option.isNone(configuredSecret)) {
      // Printed once, for the launcher that started the node; it is never logged.
      yield* Console.log(`CC_APP_SECRET=${Redacted.value(appSecret)}`)
    }
    const model = layerFromSpec(Option.getOrUndefined(options.model), {
      baseUrl: Option.getOrElse(options.modelBaseUrl, () => modelConfig.baseUrl),
      modelApi: Option.getOrElse(options.modelApi, () => modelConfig.modelApi),
      openAiKey: modelConfig.openAiKey,
      anthropicKey: modelConfig.anthropicKey,
      scripted: Scripted.layer
    }).pipe(Layer.orDie)
    yield* Layer.launch(
      Server.serve({
        dataDir,
        appSecret,
        model,
        host: Option.getOrElse(options.host, () => listen.host),
        port: Option.getOrElse(options.port, () => listen.port)
      })
    )
  })).pipe(Command.withDescription("Run the local node"))
