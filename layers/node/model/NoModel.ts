/** The ModelProvider of a node started without `--model`: it reports no model and tells how to set one. */
import { Effect, Layer } from "effect"
import { ModelFailure, ModelProvider } from "../../../services/node/ModelProvider.js"

export const message = "No model is configured. Start the node with --model openai:MODEL (and --model-base-url or " +
  "CC_MODEL_BASE_URL, key in CC_MODEL_API_KEY), --model anthropic:MODEL (key in CC_ANTHROPIC_API_KEY) or " +
  "--model scripted:FILE."

export const layer: Layer.Layer<ModelProvider> = Layer.succeed(
  ModelProvider,
  ModelProvider.of({
    info: null,
    run: () => Effect.fail(new ModelFailure({ code: "no-model", message }))
  })
)
