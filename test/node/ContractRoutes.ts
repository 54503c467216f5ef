/**
 * The node's routes for the Contract.*.test.ts files: every route of
 * spec/node-api.md and those docs/decisions.md decides, with their
 * protection, and what NodeApi actually declares for each.
 */
import { HttpApi } from "@effect/platform"
import { Either, Option, Schema } from "effect"
import { NodeApi } from "../../schema/node/Api.js"
import { Authenticated, PersonOnly } from "../../schema/node/Security.js"

export type Protection = "public" | "authenticated" | "person-only"
export type Route = readonly [method: string, path: string, protection: Protection]

export const W = "/conversations/{id}/widgets/{instanceId}"

/** Every route of spec/node-api.md, with the protection the spec gives it. */
export const expected: ReadonlyArray<Route> = [
  // Public routes
  ["GET", "/health", "public"],
  ["GET", "/.well-known/app.json", "public"],
  ["GET", "/openapi.json", "public"],
  ["GET", "/connections/callback/{packageId}", "public"],
  // Conversations and messages
  ["GET", "/node", "authenticated"],
  ["GET", "/conversations", "authenticated"],
  ["POST", "/conversations", "authenticated"],
  ["POST", "/conversations/{id}/messages", "authenticated"],
  ["POST", "/conversations/{id}/messages/stream", "authenticated"],
  ["POST", "/conversations/{id}/stop", "authenticated"],
  ["GET", "/conversations/{id}/timeline", "authenticated"],
  ["POST", "/conversations/{id}/questions/{questionId}/answer", "authenticated"],
  ["POST", "/conversations/{id}/questions/{questionId}/cancel", "authenticated"],
  ["POST", "/conversations/{id}/questions/{questionId}/ask-again", "authenticated"],
  ["GET", "/composer/suggestions", "authenticated"],
  ["POST", "/stop", "authenticated"],
  ["POST", "/conversations/{id}/delete", "person-only"],
  ["POST", "/app-intents/host-control/{controlId}", "person-only"],
  ["POST", "/app-intents/confirm", "person-only"],
  ["POST", "/app-intents", "authenticated"],
  // Widget routes
  ["POST", `${W}/export`, "person-only"],
  ["POST", `${W}/actions`, "authenticated"],
  ["GET", `${W}/jobs`, "authenticated"],
  ["GET", `${W}/jobs/{jobId}`, "authenticated"],
  ["POST", `${W}/jobs/{jobId}`, "authenticated"],
  ["GET", `${W}/artifacts/{artifactId}/content`, "authenticated"],
  ["POST", `${W}/artifacts`, "authenticated"],
  ["POST", `${W}/artifacts/pick`, "person-only"],
  ["POST", `${W}/artifacts/{artifactId}/chunks`, "authenticated"],
  ["POST", `${W}/artifacts/{artifactId}/finalize`, "authenticated"],
  ["POST", `${W}/artifacts/{artifactId}/attach`, "authenticated"],
  ["DELETE", `${W}/artifacts/{artifactId}`, "authenticated"],
  // Artifact routes outside a widget prefix
  ["GET", "/artifacts/{artifactId}", "authenticated"],
  ["GET", "/artifacts/{artifactId}/content", "authenticated"],
  ["POST", "/artifacts/{artifactId}/export", "person-only"],
  // Inbox, notices, work, effects
  ["GET", "/inbox", "authenticated"],
  ["POST", "/work/{id}/retry", "authenticated"],
  ["POST", "/work/{id}/cancel", "authenticated"],
  ["GET", "/work", "authenticated"],
  ["GET", "/activity", "authenticated"],
  ["POST", "/packages/install", "person-only"],
  ["POST", "/packages/approvals/{approvalId}/decision", "person-only"],
  ["POST", "/tasks/{taskId}/approvals/{approvalId}/decide", "person-only"],
  ["POST", "/inbox/notices/{id}/skip-version", "authenticated"],
  ["POST", "/inbox/notices/{id}/unskip-version", "authenticated"],
  ["DELETE", "/inbox/skipped-versions/{kind}/{name}/{version}", "authenticated"],
  // `update` is refused to machine surfaces by the handler, by action name
  ["POST", "/inbox/notices/{id}/actions/{action}", "authenticated"],
  ["POST", "/effects/{effectId}/reconcile", "person-only"],
  ["POST", "/credentials", "authenticated"],
  // Themes and appearance
  ["GET", "/themes", "authenticated"],
  ["GET", "/appearance", "authenticated"],
  ["PUT", "/preferences/experience.themeRef", "authenticated"],
  ["PUT", "/preferences/experience.accent", "authenticated"],
  ["PUT", "/preferences/experience.density", "authenticated"],
  ["PUT", "/preferences/experience.font", "authenticated"],
  ["PUT", "/preferences/experience.codeFont", "authenticated"],
  // Execution mode of turns from other programs (a token holder may change it)
  ["PUT", "/preferences/execution.machineTurns", "authenticated"],
  // Map tiles
  ["PUT", "/preferences/maps.tilePolicy", "person-only"],
  ["POST", "/preferences/maps.tilePolicy/undo", "person-only"],
  ["GET", "/map-tiles", "authenticated"],
  ["GET", "/map-tiles/key", "authenticated"],
  ["PUT", "/map-tiles/key", "person-only"],
  ["DELETE", "/map-tiles/key", "person-only"],
  ["GET", "/map-tiles/{z}/{x}/{y}", "authenticated"]
]

/**
 * Routes the spec leaves open ("not shown") and docs/decisions.md decides, with their protection: the package
 * directory, the install request of machine surfaces, approval reads and the `package.install-approval` stream.
 */
export const decided: ReadonlyArray<Route> = [
  ["GET", "/packages", "authenticated"],
  ["GET", "/packages/listing/{packageId}", "authenticated"],
  ["POST", "/packages/local", "authenticated"],
  ["POST", "/packages/install-requests", "authenticated"],
  ["GET", "/packages/approvals/{approvalId}", "authenticated"],
  ["GET", "/packages/approval-events", "authenticated"],
  // Issuing the single-use state a connection's callback is authenticated by (any token holder, as /credentials)
  ["POST", "/connections/{packageId}/start", "authenticated"],
  ["PUT", "/preferences/execution.installs", "person-only"],
  // The deny rules of the execution policy (docs/decisions.md, "Package tools in turns, …")
  ["PUT", "/preferences/execution.denyRules", "person-only"],
  // A widget instance as the app draws it, its frame and its semantic description (docs/decisions.md, "Widget instances")
  ["GET", W, "authenticated"],
  ["GET", `${W}/frame`, "authenticated"],
  ["PUT", `${W}/semantic`, "authenticated"],
  ["GET", `${W}/semantic`, "authenticated"],
  // Offered actions handed to a widget and the app's report (docs/decisions.md, "Offered actions and job approvals")
  ["GET", `${W}/offered`, "authenticated"],
  ["POST", `${W}/offered/{requestId}`, "authenticated"],
  // The approved project folders of the composer (docs/decisions.md, "Composer suggestions and references")
  ["PUT", "/preferences/composer.projectFolders", "person-only"]
]

export interface Declared {
  readonly group: string
  readonly name: string
  readonly method: string
  readonly path: string
  readonly protection: Protection | "both"
  readonly errorStatuses: ReadonlyArray<number>
  /** Whether the sample request below (sample path values, `{}` as body, no query) decodes. */
  readonly samplesDecode: boolean
}

export const sampleParams: Record<string, string> = { z: "1", x: "1", y: "1", kind: "package" }
export const concrete = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => sampleParams[name] ?? "sample1")
export const samplePath = (path: string) =>
  Object.fromEntries([...path.matchAll(/:(\w+)/g)].map(([, name]) => [name!, sampleParams[name!] ?? "sample1"]))
export const decodes = (schema: unknown, input: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown, never>)(input))

export const declared: ReadonlyArray<Declared> = (() => {
  const rows: Array<Declared> = []
  HttpApi.reflect(NodeApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors, group, middleware }) => {
      const tags: ReadonlySet<unknown> = middleware
      const personOnly = tags.has(PersonOnly)
      const authenticated = tags.has(Authenticated)
      rows.push({
        group: group.identifier,
        name: endpoint.name,
        method: endpoint.method,
        path: endpoint.path.replace(/:(\w+)/g, "{$1}"),
        protection: personOnly && authenticated ? "both" : personOnly ? "person-only" : authenticated ? "authenticated" : "public",
        errorStatuses: [...errors.keys()],
        samplesDecode: [
          Option.map(endpoint.pathSchema, (schema) => decodes(schema, samplePath(endpoint.path))),
          Option.map(endpoint.payloadSchema, (schema) => endpoint.method === "GET" || decodes(schema, {})),
          Option.map(endpoint.urlParamsSchema, (schema) => decodes(schema, {}))
        ].every((check) => Option.getOrElse(check, () => true))
      })
    }
  })
  return rows
})()

export const key = (method: string, path: string) => `${method} ${path}`
