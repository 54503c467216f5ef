/** What `clark node serve` runs: the node's server on its data dir, with the model the options name. */
import { Config, Console, Effect, Layer, Option, Redacted } from "effect"
import * as path from "node:path"
import { generateAppSecret } from "../../../layers/node/fs/Identity.js"
import * as Scripted from "../../../layers/node/model/Scripted.js"
import { layerFromSpec, ModelConfig } from "../../../layers/node/model/Select.js"
import * as Server from "../../node/Server.js"
import { resolveDataDir, type ServeOptions } from "../NodeServe.js"

export const run = (options: ServeOptions) =>
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
  })
