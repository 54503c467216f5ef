/**
 * The node contract against the spec's route tables: every route declared
 * exactly once with its method, path and protection (public, any token
 * holder, person-only), the OpenAPI description without the routes the spec
 * keeps out of it, and the pending handlers answering 501.
 */
import { HttpApi, HttpApiBuilder, HttpServer, OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { NodeApi } from "../../schema/node/Api.js"
import { NotImplementedYet } from "../../services/node/PendingErrors.js"
import { Authenticated, PersonOnly } from "../../schema/node/Security.js"
import { PendingGroupsLive } from "../../src/node/handlers/Pending.js"
import { toNodeError } from "../../src/node/http/Errors.js"

type Protection = "public" | "authenticated" | "person-only"
type Route = readonly [method: string, path: string, protection: Protection]

const W = "/conversations/{id}/widgets/{instanceId}"

/** Every route of spec/node-api.md, with the protection the spec gives it. */
const expected: ReadonlyArray<Route> = [
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
const decided: ReadonlyArray<Route> = [
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

interface Declared {
  readonly group: string
  readonly name: string
  readonly method: string
  readonly path: string
  readonly protection: Protection | "both"
  readonly errorStatuses: ReadonlyArray<number>
  /** Whether the sample request below (sample path values, `{}` as body, no query) decodes. */
  readonly samplesDecode: boolean
}

const sampleParams: Record<string, string> = { z: "1", x: "1", y: "1", kind: "package" }
const concrete = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => sampleParams[name] ?? "sample1")
const samplePath = (path: string) =>
  Object.fromEntries([...path.matchAll(/:(\w+)/g)].map(([, name]) => [name!, sampleParams[name!] ?? "sample1"]))
const decodes = (schema: unknown, input: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown, never>)(input))

const declared: ReadonlyArray<Declared> = (() => {
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

const key = (method: string, path: string) => `${method} ${path}`

describe("node contract", () => {
  it("declares every route of the spec", () => {
    const routes = new Set(declared.map((row) => key(row.method, row.path)))
    const missing = expected.filter(([method, path]) => !routes.has(key(method, path)))
    expect(missing).toEqual([])
  })

  it("declares no route the spec does not list, beside the decided ones", () => {
    const listed = new Set([...expected, ...decided].map(([method, path]) => key(method, path)))
    const extra = declared.filter((row) => !listed.has(key(row.method, row.path))).map((row) => key(row.method, row.path))
    expect(extra).toEqual([])
  })

  it("declares each route exactly once", () => {
    const counts = new Map<string, number>()
    for (const row of declared) counts.set(key(row.method, row.path), (counts.get(key(row.method, row.path)) ?? 0) + 1)
    expect([...counts].filter(([, count]) => count > 1)).toEqual([])
    expect(new Set(expected.map(([method, path]) => key(method, path))).size).toBe(expected.length)
  })

  it("protects each route as the spec (or the decision) says", () => {
    const protectionOf = new Map(declared.map((row) => [key(row.method, row.path), row.protection]))
    const wrong = [...expected, ...decided]
      .filter(([method, path, protection]) => protectionOf.get(key(method, path)) !== protection)
      .map(([method, path, protection]) => ({ route: key(method, path), expected: protection, declared: protectionOf.get(key(method, path)) }))
    expect(wrong).toEqual([])
  })

  it("lists the person-only routes of the Authentication section", () => {
    const personOnly = declared
      .filter((row) => row.protection === "person-only")
      .map((row) => key(row.method, row.path))
      .sort()
    expect(personOnly).toEqual(
      [
        "POST /app-intents/host-control/{controlId}",
        "POST /tasks/{taskId}/approvals/{approvalId}/decide",
        "POST /packages/install",
        "POST /packages/approvals/{approvalId}/decision",
        "POST /effects/{effectId}/reconcile",
        `POST ${W}/export`,
        `POST ${W}/artifacts/pick`,
        "POST /artifacts/{artifactId}/export",
        "POST /conversations/{id}/delete",
        "POST /app-intents/confirm",
        "PUT /preferences/maps.tilePolicy",
        "POST /preferences/maps.tilePolicy/undo",
        "PUT /map-tiles/key",
        "DELETE /map-tiles/key",
        // Decided: loosening the install policy, or lifting a deny rule, is the person's own act.
        "PUT /preferences/execution.installs",
        "PUT /preferences/execution.denyRules",
        // Decided: approving a project folder gives references to its files.
        "PUT /preferences/composer.projectFolders"
      ].sort()
    )
  })

  it("declares the statuses of the codes the spec lists for a route", () => {
    const statusesOf = new Map(declared.map((row) => [key(row.method, row.path), row.errorStatuses]))
    const needs: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
      [`POST ${W}/actions`, [400, 403, 404, 409, 429, 502, 503, 504]],
      [`GET ${W}/jobs/{jobId}`, [404, 503]],
      [`POST ${W}/jobs/{jobId}`, [404, 409]],
      [`POST ${W}/artifacts/{artifactId}/chunks`, [403, 409, 429]],
      [`DELETE ${W}/artifacts/{artifactId}`, [403, 404]],
      ["GET /artifacts/{artifactId}", [404]],
      ["GET /artifacts/{artifactId}/content", [404, 409]],
      ["POST /work/{id}/retry", [404, 409, 429]],
      ["POST /packages/install", [400, 403, 409, 503]],
      ["POST /packages/approvals/{approvalId}/decision", [400, 403, 409]],
      ["POST /inbox/notices/{id}/skip-version", [409]],
      ["POST /inbox/notices/{id}/actions/{action}", [400, 403, 404, 409]],
      ["POST /effects/{effectId}/reconcile", [404, 409]],
      ["PUT /preferences/experience.themeRef", [400, 409]],
      ["PUT /preferences/maps.tilePolicy", [400]],
      ["GET /map-tiles/{z}/{x}/{y}", [400, 404, 429, 502, 503]],
      ["POST /conversations/{id}/delete", [404, 409]]
    ]
    const lacking = needs.flatMap(([route, statuses]) =>
      statuses.filter((status) => !(statusesOf.get(route) ?? []).includes(status)).map((status) => `${route} ${status}`)
    )
    expect(lacking).toEqual([])
  })
})

describe("node OpenAPI description", () => {
  const spec = OpenApi.fromApi(NodeApi)
  const paths = Object.keys(spec.paths)

  it("leaves out the theme, appearance, experience preference and inbox routes", () => {
    expect(paths.filter((path) => /^\/(?:themes|appearance|inbox)(?:\/|$)|^\/preferences\/experience\./.test(path))).toEqual(
      []
    )
  })

  it("describes the conversation routes", () => {
    expect(paths).toEqual(
      expect.arrayContaining([
        "/conversations",
        "/conversations/{id}/messages",
        "/conversations/{id}/messages/stream",
        "/conversations/{id}/timeline",
        "/conversations/{id}/delete"
      ])
    )
  })
})

// ---------------------------------------------------------------------------
// The pending handlers behind a real router

const person = { surface: "person", channel: "text" } as const
const AuthenticatedStub = Layer.succeed(Authenticated, Authenticated.of({ bearer: () => Effect.succeed(person) }))
const PersonOnlyStub = Layer.succeed(PersonOnly, PersonOnly.of({ bearer: () => Effect.succeed(person) }))

const unbuilt = () => Effect.fail(toNodeError(new NotImplementedYet({ feature: "not in this test" })))
const DeclaredGroupsStub = Layer.mergeAll(
  HttpApiBuilder.group(NodeApi, "public", (handlers) =>
    handlers.handle("health", unbuilt).handle("discovery", unbuilt).handle("openapi", unbuilt)),
  HttpApiBuilder.group(NodeApi, "conversations", (handlers) =>
    handlers
      .handle("node", unbuilt)
      .handle("list", unbuilt)
      .handle("create", unbuilt)
      .handle("send", unbuilt)
      .handle("stream", unbuilt)
      .handle("stop", unbuilt)
      .handle("timeline", unbuilt)
      .handle("emergencyStop", unbuilt)),
  HttpApiBuilder.group(NodeApi, "questions", (handlers) =>
    handlers.handle("answer", unbuilt).handle("cancel", unbuilt).handle("askAgain", unbuilt)),
  HttpApiBuilder.group(NodeApi, "hostControl", (handlers) => handlers.handle("answer", unbuilt)),
  HttpApiBuilder.group(NodeApi, "deletion", (handlers) => handlers.handle("delete", unbuilt).handle("confirm", unbuilt)),
  HttpApiBuilder.group(NodeApi, "appIntents", (handlers) => handlers.handle("perform", unbuilt)),
  HttpApiBuilder.group(NodeApi, "composer", (handlers) => handlers.handle("suggestions", unbuilt)),
  HttpApiBuilder.group(NodeApi, "maps", (handlers) =>
    handlers
      .handle("setTilePolicy", unbuilt)
      .handle("undoTilePolicy", unbuilt)
      .handle("tiles", unbuilt)
      .handle("key", unbuilt)
      .handle("setKey", unbuilt)
      .handle("removeKey", unbuilt)
      .handle("tile", unbuilt)),
  HttpApiBuilder.group(NodeApi, "packages", (handlers) =>
    handlers
      .handle("directory", unbuilt)
      .handle("listing", unbuilt)
      .handle("addLocal", unbuilt)
      .handle("install", unbuilt)
      .handle("requestInstall", unbuilt)
      .handle("approval", unbuilt)
      .handle("approvalEvents", unbuilt)
      .handle("decideApproval", unbuilt)
      .handle("storeCredential", unbuilt)
      .handle("startConnection", unbuilt)
      .handle("connectionCallback", unbuilt)),
  HttpApiBuilder.group(NodeApi, "preferences", (handlers) =>
    handlers
      .handle("setMachineTurns", unbuilt)
      .handle("setInstallMode", unbuilt)
      .handle("setDenyRules", unbuilt)
      .handle("setProjectFolders", unbuilt)),
  HttpApiBuilder.group(NodeApi, "inbox", (handlers) =>
    handlers
      .handle("inbox", unbuilt)
      .handle("skipVersion", unbuilt)
      .handle("unskipVersion", unbuilt)
      .handle("removeSkippedVersion", unbuilt)
      .handle("noticeAction", unbuilt)),
  // Built in src/node/handlers/Widgets.ts (with the job and export handlers of WidgetJobs.ts)
  HttpApiBuilder.group(NodeApi, "widgets", (handlers) =>
    handlers
      .handle("instance", unbuilt)
      .handle("frame", unbuilt)
      .handle("publishSemantic", unbuilt)
      .handle("semantic", unbuilt)
      .handle("press", unbuilt)
      .handle("export", unbuilt)
      .handle("jobs", unbuilt)
      .handle("job", unbuilt)
      .handle("cancelJob", unbuilt)),
  // Built in src/node/handlers/OfferedActions.ts
  HttpApiBuilder.group(NodeApi, "offeredActions", (handlers) => handlers.handle("waiting", unbuilt).handle("report", unbuilt)),
  // Built in src/node/handlers/Work.ts (reconcile); its other routes still answer 501 there too.
  HttpApiBuilder.group(NodeApi, "work", (handlers) =>
    handlers
      .handle("list", unbuilt)
      .handle("retry", unbuilt)
      .handle("cancel", unbuilt)
      .handle("activity", unbuilt)
      .handle("reconcile", unbuilt)
      .handle("decideTaskApproval", unbuilt)),
  // Built in src/node/handlers/Artifacts.ts and WidgetArtifacts.ts.
  HttpApiBuilder.group(NodeApi, "artifacts", (handlers) =>
    handlers.handle("get", unbuilt).handle("content", unbuilt).handle("export", unbuilt)),
  HttpApiBuilder.group(NodeApi, "widgetArtifacts", (handlers) =>
    handlers
      .handle("read", unbuilt)
      .handle("create", unbuilt)
      .handle("pick", unbuilt)
      .handle("writeChunk", unbuilt)
      .handle("finalize", unbuilt)
      .handle("attach", unbuilt)
      .handle("discard", unbuilt))
)

describe("pending node handlers", () => {
  it("route every declared path and answer 501 NOT_IMPLEMENTED", async () => {
    const { dispose, handler } = HttpApiBuilder.toWebHandler(
      Layer.mergeAll(
        HttpApiBuilder.api(NodeApi).pipe(
          Layer.provide(PendingGroupsLive),
          Layer.provide(DeclaredGroupsStub),
          Layer.provide(AuthenticatedStub),
          Layer.provide(PersonOnlyStub)
        ),
        HttpServer.layerContext
      )
    )
    try {
      for (const [method, path] of expected) {
        const response = await handler(
          new Request(`http://node.test${concrete(path)}`, {
            method,
            headers: { authorization: "Bearer test", "content-type": "application/json" },
            ...(method === "GET" ? {} : { body: "{}" })
          })
        )
        // Routed: the handler answers 501, or the request decoding 400 where the sample does not decode; never
        // the router's 404. (No envelope middleware here: the 400 is the decoder's own error.)
        const route = declared.find((row) => row.method === method && row.path === path)!
        const body: any = await response.json()
        if (route.samplesDecode) {
          expect({ route: `${method} ${path}`, status: response.status, code: body.code })
            .toEqual({ route: `${method} ${path}`, status: 501, code: "NOT_IMPLEMENTED" })
        } else {
          expect({ route: `${method} ${path}`, status: response.status, tag: body._tag })
            .toEqual({ route: `${method} ${path}`, status: 400, tag: "HttpApiDecodeError" })
        }
      }
      for (const path of ["/themes", "/inbox", "/map-tiles/3/2/1", "/work", "/artifacts/a1"]) {
        const response = await handler(new Request(`http://node.test${path}`, { headers: { authorization: "Bearer test" } }))
        expect(response.status).toBe(501)
        expect(await response.json()).toEqual({ code: "NOT_IMPLEMENTED", message: expect.any(String) })
      }
    } finally {
      await dispose()
    }
  })
})
