/** The node's public routes and its own description. */
import { Schema } from "effect"

export const NodeHealth = Schema.Struct({
  status: Schema.Literal("ok"),
  runtime: Schema.Struct({ name: Schema.String, version: Schema.String, platform: Schema.String, arch: Schema.String }),
  protocol: Schema.Struct({
    http: Schema.String,
    api: Schema.Literal(1),
    events: Schema.Literal("sse"),
    bridge: Schema.Int,
    appearanceApi: Schema.Struct({ min: Schema.Int, max: Schema.Int })
  })
}).annotations({ identifier: "NodeHealth" })

export const Discovery = Schema.Struct({
  name: Schema.String,
  apiVersion: Schema.Literal(1),
  surfaces: Schema.Array(
    Schema.Struct({
      kind: Schema.Literal("api", "mcp", "websocket", "cli"),
      endpoints: Schema.Record({ key: Schema.String, value: Schema.String })
    })
  )
}).annotations({ identifier: "Discovery" })

export const ModelInfo = Schema.Struct({ provider: Schema.String, name: Schema.String })

export const NodeInfo = Schema.Struct({
  nodeId: Schema.String,
  label: Schema.String,
  fingerprint: Schema.String,
  model: Schema.NullOr(ModelInfo)
}).annotations({ identifier: "NodeInfo" })
