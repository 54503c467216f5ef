import { HttpApiBuilder, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import * as os from "node:os"
import { NodeApi } from "../../../schema/node/Api.js"

const health = {
  status: "ok" as const,
  runtime: { name: "node", version: process.versions.node, platform: os.platform(), arch: os.arch() },
  protocol: {
    http: "1.1",
    api: 1 as const,
    events: "sse" as const,
    bridge: 2,
    appearanceApi: { min: 2, max: 2 }
  }
}

const discovery = {
  name: "clark-node",
  apiVersion: 1 as const,
  surfaces: [
    {
      kind: "api" as const,
      endpoints: {
        rest: "/",
        openapi: "/openapi.json",
        stream: "/conversations/{id}/messages/stream"
      }
    },
    { kind: "mcp" as const, endpoints: { http: "/mcp" } },
    { kind: "websocket" as const, endpoints: { relay: "/relay" } },
    { kind: "cli" as const, endpoints: { command: "clark node" } }
  ]
}

export const PublicLive = HttpApiBuilder.group(NodeApi, "public", (handlers) => {
  // Groups annotated OpenApi.Exclude (themes, appearance, inbox) are left out, as the spec requires.
  const openapi = OpenApi.fromApi(NodeApi)
  return handlers
    .handle("health", () => Effect.succeed(health))
    .handle("discovery", () => Effect.succeed(discovery))
    .handle("openapi", () => Effect.succeed(openapi))
})
