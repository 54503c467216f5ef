/**
 * GET / and GET /api/v1: a short JSON index that points to the API's
 * description and its health, so a person or a tool that starts at the root
 * finds its way instead of a bare 404. Outside the contract: it is a pointer
 * to the description, not an operation of it.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { apiTitle, descriptionVersion } from "../../../schema/marketplace/Api.js"

export const apiBase = "/api/v1"

export const index = {
  name: apiTitle,
  version: descriptionVersion,
  links: {
    openapi: `${apiBase}/openapi.json`,
    health: `${apiBase}/health`
  }
} as const

export const IndexLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const response = HttpServerResponse.unsafeJson(index)
    yield* router.get("/", Effect.succeed(response))
    yield* router.get(apiBase, Effect.succeed(response))
  })
)
