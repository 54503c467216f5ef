/** The `composer` group: GET /composer/suggestions (services/node/Composer.ts). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { Composer } from "../../../services/node/Composer.js"

export const ComposerLive = HttpApiBuilder.group(NodeApi, "composer", (handlers) =>
  Effect.gen(function*() {
    const composer = yield* Composer
    return handlers.handle("suggestions", ({ urlParams }) =>
      composer.suggestions({ trigger: urlParams.trigger, q: urlParams.q ?? "", conversationId: urlParams.conversationId }))
  }))
