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

/**
 * Only what this node serves: a client follows these, so an endpoint listed
 * before it answers is a 404 by design. The MCP endpoint and the WebSocket
 * relay are added with the machine-surface work that serves them. Every value
 * of the api surface is a route of the node (the REST routes themselves are
 * listed by the OpenAPI description); the cli surface names a command.
 */
const discovery = {
  name: "clark-node",
  apiVersion: 1 as const,
  surfaces: [
    {
      kind: "api" as const,
      endpoints: {
        health: "/health",
        openapi: "/openapi.json",
        stream: "/conversations/{id}/messages/stream"
      }
    },
    { kind: "cli" as const, endpoints: { command: "clark node" } }
  ]
}

export const PublicLive = HttpApiBuilder.group(NodeApi, "public", (handlers) =>
  Effect.gen(function*() {
    // Built by its first request, not at start-up (20-55 ms the host app would wait for /health). Groups annotated
    // OpenApi.Exclude (themes, appearance, inbox) are left out, as the spec requires.
    const openapi = yield* Effect.cached(Effect.sync(() => OpenApi.fromApi(NodeApi)))
    return handlers
      .handle("health", () => Effect.succeed(health))
      .handle("discovery", () => Effect.succeed(discovery))
      .handle("openapi", () => openapi)
  }))
