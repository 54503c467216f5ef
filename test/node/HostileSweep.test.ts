/**
 * Every route of the node's contract, tried from outside with hostile input: malformed, wrongly typed, deeply
 * nested and oddly encoded bodies, hostile path segments and query strings. Each answer is a complete `{code,
 * message}` envelope with a status below 500 that the route declares (or a refusal of the request itself that
 * every route shares), and nothing the person can see has changed afterwards.
 */
import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeApi } from "../../schema/node/Api.js"
import { type Answer, bodies, queries, refusalProblem, segments, send, wrongTypedBody } from "../support/HostileInput.js"
import { conversation, timeline } from "../support/NodeFixtures.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"
import { type Declared, declared } from "./ContractRoutes.js"

/** Declared, not built yet: its handlers answer 501 NOT_IMPLEMENTED (src/node/handlers/Pending.ts). */
const pendingGroups = new Set(["themes"])

/**
 * The provider's return page: the browser lands on it, so it answers a short HTML page rather than the envelope
 * (the spec's "answers a short page that never repeats the code or the state").
 */
const browserRoutes = new Set(["GET /connections/callback/{packageId}"])

const wrongTyped = wrongTypedBody(OpenApi.fromApi(NodeApi))

/** What is wrong with an answer to hostile input, if anything. */
const problem = (answer: Answer, route: Declared): string | undefined => {
  const pending = pendingGroups.has(route.group) && answer.status === 501 && answer.text.includes("\"NOT_IMPLEMENTED\"")
  if (answer.status >= 500 && !pending) return `status ${answer.status}: ${answer.text.slice(0, 200)}`
  if (answer.status < 400 || pending) return undefined
  // A target the router cannot match answers the envelope before the route is known.
  if (browserRoutes.has(`${route.method} ${route.path}`) && answer.contentType?.startsWith("text/html")) {
    return answer.text.includes("</html>") ? undefined : `not a whole page: ${answer.text.slice(0, 100)}`
  }
  return refusalProblem(answer, route.errorStatuses, (body) => typeof body?.code === "string" && typeof body?.message === "string")
}

describe("hostile input on every node route", () => {
  it.effect("answers each in its envelope with a declared status and changes nothing", () =>
    Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const before = yield* node.request("GET", "/conversations")
      const fill = (path: string, value?: string) =>
        path.replace(/\{(\w+)\}/g, (_, name: string) => value ?? (name === "id" ? id : ["z", "x", "y"].includes(name) ? "1" : "sample1"))
      const found: Array<string> = []
      let tried = 0
      for (const route of declared) {
        const attempt = (label: string, path: string, body?: string | Buffer, contentType?: string) =>
          Effect.map(
            Effect.promise(() => send(`${node.baseUrl}${path}`, route.method, node.headers("person"), body, contentType)),
            (answer) => {
              tried++
              const wrong = problem(answer, route)
              if (wrong !== undefined) found.push(`${route.method} ${route.path} with ${label}: ${wrong}`)
            }
          )
        // A body that cannot decode rides along with the hostile targets, so a route that would act on `{}` acts on
        // nothing; a route without a payload ignores bodies.
        const undecodable = route.method === "GET" ? undefined : "{"
        if (route.method !== "GET") {
          for (const [label, body, contentType] of bodies) yield* attempt(label, fill(route.path), body, contentType)
          const wrong = wrongTyped(route.method, route.path)
          if (wrong !== undefined) yield* attempt(`every field of a wrong type ${wrong}`, fill(route.path), wrong, "application/json")
        }
        if (route.path.includes("{")) {
          for (const [label, value] of segments) yield* attempt(`${label} in the path`, fill(route.path, value), undecodable, "application/json")
        }
        for (const query of queries) yield* attempt(`query ${query.slice(0, 30)}`, fill(route.path) + query, undecodable, "application/json")
      }
      expect(found).toEqual([])
      expect(tried).toBeGreaterThan(declared.length * 4)
      const after = yield* node.request("GET", "/conversations")
      expect(after.body).toEqual(before.body)
      expect(yield* timeline(id)).toEqual([])
    }).pipe(Effect.provide(NodeServer.layer({}))), { timeout: 120_000 })
})
