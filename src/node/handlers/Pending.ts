/**
 * Handlers of the node routes that are declared but not built yet: each one
 * answers 501 NOT_IMPLEMENTED. A group moves out of this file when its real
 * handlers are written.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { NotImplementedYet } from "../../../services/node/PendingErrors.js"
import { toNodeError } from "../http/Errors.js"

const notYet = () => Effect.fail(toNodeError(new NotImplementedYet({ feature: "this route" })))

export const ThemesPending = HttpApiBuilder.group(NodeApi, "themes", (handlers) =>
  handlers
    .handle("themes", notYet)
    .handle("appearance", notYet)
    .handle("setThemeRef", notYet)
    .handle("setAccent", notYet)
    .handle("setDensity", notYet)
    .handle("setFont", notYet)
    .handle("setCodeFont", notYet))

/** Every group declared but not built yet. */
export const PendingGroupsLive = Layer.mergeAll(
  ThemesPending
)
