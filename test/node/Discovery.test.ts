/**
 * What the node tells a newcomer about itself, checked on a real server:
 * `/.well-known/app.json` lists only endpoints that answer, and
 * `/openapi.json` is a valid OpenAPI 3.1 document by an independent validator.
 */
import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Effect } from "effect"
import { NodeApi } from "../../schema/node/Api.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({}))

/** The methods the contract declares on each path, in the `{name}` form discovery uses. */
const methodsOf: ReadonlyMap<string, ReadonlyArray<string>> = (() => {
  const methods = new Map<string, Array<string>>()
  HttpApi.reflect(NodeApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const path = endpoint.path.replace(/:(\w+)/g, "{$1}")
      methods.set(path, [...(methods.get(path) ?? []), endpoint.method])
    }
  })
  return methods
})()

describe("GET /.well-known/app.json", () => {
  it.scoped("advertises only endpoints this node serves, each answering something other than 404", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const discovery = yield* node.request("GET", "/.well-known/app.json", { as: "none" })
      expect(discovery.status).toBe(200)
      const surfaces: Array<{ kind: string; endpoints: Record<string, string> }> = discovery.body.surfaces
      // The MCP endpoint and the WebSocket relay come back with the machine-surface work that serves them.
      expect(surfaces.map((surface) => surface.kind).sort()).toEqual(["api", "cli"])
      expect(surfaces.find((surface) => surface.kind === "cli")?.endpoints).toEqual({ command: "clark node" })

      const created = yield* node.request("POST", "/conversations", { body: {} })
      expect(created.status).toBe(201)
      const api = surfaces.find((surface) => surface.kind === "api")
      const paths = Object.values(api?.endpoints ?? {})
      expect(paths.length).toBeGreaterThan(0)
      for (const path of paths) {
        const methods = methodsOf.get(path) ?? []
        expect(methods, `${path} is a route of the contract`).not.toEqual([])
        const concrete = path.replace("{id}", created.body.conversationId)
        for (const method of methods) {
          // An empty body: a route that takes one refuses it (400) and starts nothing.
          const response = yield* node.request(method, concrete, method === "GET" ? {} : { body: {} })
          expect(response.status, `${method} ${concrete}`).not.toBe(404)
          expect(response.status, `${method} ${concrete}`).toBeLessThan(500)
        }
      }
    })))
})

describe("GET /openapi.json", () => {
  it.scoped("is valid OpenAPI 3.1 by an independent validator", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const response = yield* node.request("GET", "/openapi.json", { as: "none" })
      expect(response.status).toBe(200)
      const validator = new Validator()
      const result = yield* Effect.promise(() => validator.validate(response.body))
      expect(result.errors ?? []).toEqual([])
      expect(result.valid).toBe(true)
      expect(validator.version).toBe("3.1")
      // The cause of the invalid document before: one `$id` on every Schema.Unknown.
      expect(JSON.stringify(response.body)).not.toContain("/schemas/unknown")
      // Effect's own decode error is never answered: the node sends INVALID_INPUT instead.
      expect(Object.keys(response.body.components.schemas)).not.toContain("HttpApiDecodeError")
    })))
})
