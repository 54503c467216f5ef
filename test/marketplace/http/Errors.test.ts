import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as http from "node:http"
import { Unauthorized } from "../../../schema/marketplace/Errors.js"
import { Authentication } from "../../../schema/marketplace/Security.js"
import { PackageStore } from "../../../services/marketplace/PackageStore.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { exchange, head } from "../../support/RawHttp.js"

type Response = Awaited<ReturnType<RunningMarketplace["request"]>>

const envelopeFields = ["code", "details", "message", "requestId"]

/** The body is exactly `{error: {code, message, requestId, details?}}` and the request id matches the header. */
const expectEnvelope = (response: Response, status: number, code: string) => {
  expect(response.status).toBe(status)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  expect(Object.keys(response.body)).toEqual(["error"])
  const { error } = response.body
  expect(envelopeFields).toEqual(expect.arrayContaining(Object.keys(error)))
  expect(error.code).toBe(code)
  expect(error.message).toEqual(expect.stringMatching(/\S/))
  expect(error.requestId).toEqual(expect.stringMatching(/\S/))
  expect(error.requestId).toBe(response.headers.get("x-request-id"))
}

const bearer = { authorization: "Bearer cmk_not-a-real-token" }
const json = { "content-type": "application/json" }

const postStatus = (body: string): RequestInit => ({
  method: "POST",
  headers: { ...bearer, ...json },
  body
})

const document = {
  categories: [{ slug: "tools", name: "Tools" }],
  pages: [{
    slug: "about",
    kind: "custom",
    title: "About",
    revisions: [{
      publishedAt: "2024-05-01T00:00:00Z",
      document: {
        schemaVersion: 1,
        layout: { id: "default", version: 1 },
        meta: { title: "About", description: "", locale: "en", noindex: false },
        blocks: []
      }
    }]
  }]
}

describe.each(dialects)("error envelope on %s", (dialect) => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace(dialect, document)
  })
  afterAll(() => server.close())

  it.each([
    ["an invalid path parameter", 400, "validation_failed", "/api/v1/categories/Bad", {}],
    ["an invalid query parameter", 400, "validation_failed", "/api/v1/pages/about?format=html", {}],
    ["an unknown category", 404, "not_found", "/api/v1/categories/nope", {}],
    ["an unknown route under /api/v1", 404, "not_found", "/api/v1/nope", {}],
    ["an unknown route outside /api/v1", 404, "not_found", "/nope", {}],
    ["GET /me without a credential", 401, "unauthorized", "/api/v1/me", {}],
    ["GET /me with an unknown session cookie", 401, "unauthorized", "/api/v1/me", {
      headers: { cookie: "app.session_token=abc" }
    }],
    [
      "a curation POST with an unknown bearer token",
      401,
      "unauthorized",
      "/api/v1/curation/packages/x/status",
      postStatus(JSON.stringify({ status: "listed" }))
    ]
  ] as const)("%s answers %i %s in the envelope", async (_, status, code, path, init) => {
    expectEnvelope(await server.request(path, init), status, code)
  })

  it.each([
    ["%ff in a path", "/api/v1/categories/%ff", ""],
    ["%zz in a path", "/api/v1/categories/%zz", ""],
    ["a bare % in a path", "/api/v1/packages/100%", ""],
    ["%00 in a path", "/api/v1/packages/a%00b", ""],
    ["%ff in an unknown route", "/api/v1/nope%ff", ""],
    ["%00 in a query parameter", "/api/v1/search?q=a%00b", "q"],
    ["%ff in a query parameter", "/api/v1/packages?q=%ff", "q"],
    ["an encoded surrogate in a query parameter", "/api/v1/search?q=%ed%a0%80", "q"]
  ])("answers %s with 400 validation_failed", async (_, path, named) => {
    const response = await server.request(path)
    expectEnvelope(response, 400, "validation_failed")
    expect(response.body.error.details.issues).toEqual([{ path: named, message: response.body.error.message }])
  })

  it("still serves a well-encoded path and query", async () => {
    expect((await server.request("/api/v1/search?q=caf%C3%A9+bar")).status).toBe(200)
    expect((await server.request("/api/v1/categories/tool%73")).status).toBe(200)
  })

  it("names the offending parameter in details.issues of a validation failure", async () => {
    const response = await server.request("/api/v1/categories/Bad")
    expect(response.body.error.details).toEqual({ issues: [{ path: "slug", message: expect.any(String) }] })
  })

  it("gives every response its own x-request-id", async () => {
    const paths = [
      "/api/v1/health",
      "/api/v1/categories",
      "/api/v1/categories",
      "/api/v1/categories/tools",
      "/api/v1/collections",
      "/api/v1/pages/about",
      "/api/v1/pages/about?format=md",
      "/api/v1/nope"
    ]
    const responses = []
    for (const path of paths) responses.push(await server.request(path))
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 404])
    const ids = responses.map((r) => r.headers.get("x-request-id"))
    for (const id of ids) expect(id).toMatch(/\S/)
    expect(new Set(ids).size).toBe(paths.length)
  })

  it("checks the credential before reading the body: a malformed body without a valid credential is 401", async () => {
    const response = await server.request("/api/v1/curation/packages/x/status", postStatus("{bad"))
    expectEnvelope(response, 401, "unauthorized")
  })
})

/**
 * POST with node:http: the server answers an oversized body before reading it
 * all and closes the connection, which fetch reports as a failed upload.
 */
const postRaw = (url: string, body: string) =>
  new Promise<{ status: number; body: any; requestId: string | undefined }>((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers: { ...bearer, ...json } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
          requestId: response.headers["x-request-id"] as string | undefined
        }))
    })
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error)
    })
    request.end(body)
  })

/** Accepts any non-empty credential as a curator, so requests reach body decoding. */
const AcceptingAuthentication = Layer.succeed(
  Authentication,
  Authentication.of({
    bearer: (token) =>
      Redacted.value(token).length > 0
        ? Effect.succeed({ userId: "u1", role: "admin", scopes: ["packages:curate"], kind: "api-token", viaCookie: false })
        : Effect.fail(new Unauthorized({ message: "A credential is required" })),
    cookie: () => Effect.fail(new Unauthorized({ message: "A credential is required" }))
  })
)

describe.each(dialects)("request bodies on %s", (dialect) => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace(dialect, {}, {
      services: (live) => Layer.merge(live, AcceptingAuthentication)
    })
  })
  afterAll(() => server.close())

  const post = (body: string) => server.request("/api/v1/curation/packages/x/status", postStatus(body))

  it("answers malformed JSON with 400 bad_request", async () => {
    expectEnvelope(await post("{bad"), 400, "bad_request")
  })

  it("answers a body over 1 MiB with 400 bad_request", async () => {
    const body = JSON.stringify({ status: "listed", reason: "x".repeat(1024 * 1024 + 16) })
    const response = await postRaw(`${server.baseUrl}/api/v1/curation/packages/x/status`, body)
    expect(response.status).toBe(400)
    expect(response.body.error.code).toBe("bad_request")
    expect(response.body.error.requestId).toBe(response.requestId)
  })

  it("answers a chunked body over 1 MiB with a whole 400 bad_request envelope, not a reset", async () => {
    const { host } = new URL(server.baseUrl)
    const framed = (bytes: Buffer) => Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")])
    const chunks = Array.from({ length: 20 }, () => framed(Buffer.alloc(64 * 1024, "x")))
    const response = await Effect.runPromise(exchange(server.baseUrl, [
      head([
        "POST /api/v1/curation/packages/x/status HTTP/1.1",
        `host: ${host}`,
        "authorization: Bearer any",
        "content-type: application/json",
        "transfer-encoding: chunked"
      ]),
      framed(Buffer.from("{\"status\":\"listed\",\"reason\":\"")),
      ...chunks,
      "0\r\n\r\n"
    ]))
    expect(response.reset).toBe(false)
    expect(response.status).toBe(400)
    expect(response.body.error).toMatchObject({ code: "bad_request", details: { limitBytes: 1024 * 1024 } })
    expect(response.body.error.requestId).toBe(response.headers["x-request-id"])
  })

  it("answers nesting 3,000 levels deep with 400 bad_request", async () => {
    const deep = `{"status":${"[".repeat(3000)}${"]".repeat(3000)}}`
    expectEnvelope(await post(deep), 400, "bad_request")
    const deepObjects = `${"{\"a\":".repeat(3000)}1${"}".repeat(3000)}`
    expectEnvelope(await post(deepObjects), 400, "bad_request")
  })

  it.each([
    ["a malformed multipart body", "multipart/form-data; boundary=xyz", "--xyz\r\nnot a part"],
    ["a well-formed multipart body", "multipart/form-data; boundary=xyz", "--xyz\r\ncontent-disposition: form-data; name=\"status\"\r\n\r\nlisted\r\n--xyz--\r\n"],
    ["a form body", "application/x-www-form-urlencoded", "status=listed"],
    ["JSON sent as text/plain", "text/plain", "{\"status\":\"listed\"}"],
    ["JSON sent as application/octet-stream", "application/octet-stream", "{\"status\":\"listed\"}"]
  ])("answers %s on a JSON route with 400 bad_request", async (_, contentType, body) => {
    const response = await server.request("/api/v1/curation/packages/x/status", {
      method: "POST",
      headers: { ...bearer, "content-type": contentType },
      body
    })
    expectEnvelope(response, 400, "bad_request")
    expect(response.body.error.message).toContain("application/json")
  })

  it.each([
    ["a NUL in a value", "{\"status\":\"listed\",\"reason\":\"a\\u0000b\"}", "reason", "NUL"],
    ["a NUL in a key", "{\"status\":\"listed\",\"re\\u0000ason\":\"r\"}", "", "NUL"],
    ["a lone high surrogate", "{\"status\":\"listed\",\"reason\":\"a\\ud800b\"}", "reason", "surrogate"],
    ["a lone low surrogate", "{\"status\":\"listed\",\"reason\":\"\\udc00\"}", "reason", "surrogate"]
  ])("answers %s with 400 validation_failed naming where", async (_, body, path, what) => {
    const response = await post(body)
    expectEnvelope(response, 400, "validation_failed")
    expect(response.body.error.message).toContain(what)
    expect(response.body.error.details).toEqual({ issues: [{ path, message: response.body.error.message }] })
  })

  it("accepts a surrogate pair (an emoji escaped in JSON) as text", async () => {
    // Past the body rules: the package does not exist.
    expectEnvelope(await post("{\"status\":\"listed\",\"reason\":\"\\ud83d\\ude00\"}"), 404, "not_found")
  })

  it("answers a body that does not fit the schema with 400 validation_failed naming the field", async () => {
    const response = await post(JSON.stringify({ status: "approved" }))
    expectEnvelope(response, 400, "validation_failed")
    expect(response.body.error.details.issues.map((issue: { path: string }) => issue.path)).toContain("status")
  })

  it("answers a reason over 500 characters with 400 validation_failed naming reason", async () => {
    const response = await post(JSON.stringify({ status: "listed", reason: "x".repeat(501) }))
    expectEnvelope(response, 400, "validation_failed")
    expect(response.body.error.details.issues.map((issue: { path: string }) => issue.path)).toEqual(["reason"])
  })
})

describe("Node's own parser errors", () => {
  let server: RunningMarketplace
  beforeAll(async () => {
    // Any credential passes, so the chunked body is read.
    server = await startMarketplace("sqlite", {}, { services: (live) => Layer.merge(live, AcceptingAuthentication) })
  })
  afterAll(() => server.close())

  it.each([
    ["headers over Node's limit", [
      head(["GET /api/v1/categories HTTP/1.1", "host: localhost", `x-big: ${"b".repeat(20_000)}`])
    ]],
    ["broken chunked framing", [
      head([
        "POST /api/v1/curation/packages/x/status HTTP/1.1",
        "host: localhost",
        "authorization: Bearer any",
        "content-type: application/json",
        "transfer-encoding: chunked"
      ]),
      "zz\r\n{}\r\n0\r\n\r\n"
    ]],
    ["a malformed request line", ["GARBAGE\r\n\r\n"]]
  ])("%s: 400 bad_request in the envelope with its x-request-id, then the connection closes", async (_, parts) => {
    const response = await Effect.runPromise(exchange(server.baseUrl, parts))
    expect(response.reset).toBe(false)
    expect(response.status).toBe(400)
    expect(response.headers["content-type"]).toBe("application/json")
    expect(response.headers["connection"]).toBe("close")
    expect(Object.keys(response.body)).toEqual(["error"])
    expect(response.body.error).toMatchObject({ code: "bad_request", message: expect.stringMatching(/\S/) })
    expect(response.body.error.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(response.headers["x-request-id"]).toBe(response.body.error.requestId)
  })

  it("names the header limit", async () => {
    const response = await Effect.runPromise(
      exchange(server.baseUrl, [head(["GET /api/v1/health HTTP/1.1", `x-big: ${"b".repeat(20_000)}`])])
    )
    expect(response.body.error.details).toEqual({ limitBytes: 16_384 })
  })
})

// ---------------------------------------------------------------------------
// Defects

const secret = "SECRET-INTERNAL-DETAIL"

const die = (operation: string) => () => Effect.die(new Error(`${secret} in PackageStore.${operation}`))

const DyingPackageStore = Layer.succeed(
  PackageStore,
  PackageStore.of({ find: die("find"), detail: die("detail"), versions: die("versions"), release: die("release") })
)

/** The real API on a real database, except that every PackageStore call dies. */
const startDyingServer = (dialect: "sqlite" | "postgres") =>
  startMarketplace(dialect, {}, { services: (live) => Layer.merge(live, DyingPackageStore) })

describe.each(dialects)("defects on %s", (dialect) => {
  let server: Awaited<ReturnType<typeof startDyingServer>>
  beforeAll(async () => {
    server = await startDyingServer(dialect)
  })
  afterAll(() => server.close())

  it.each([
    "/api/v1/packages",
    "/api/v1/search?q=weather",
    "/api/v1/packages/weather",
    "/api/v1/packages/weather/versions",
    "/api/v1/packages/weather/install"
  ])("GET %s answers 500 internal_error without internals", async (path) => {
    const response = await server.request(path)
    expectEnvelope(response, 500, "internal_error")
    expect(response.body.error.details).toBeUndefined()
    expect(response.text).not.toContain(secret)
    expect(response.text).not.toMatch(/stack/i)
    expect(response.text).not.toMatch(/\.ts:\d+/)
  })

  it("keeps serving routes that do not use the dying store", async () => {
    const response = await server.request("/api/v1/health")
    expect(response.status).toBe(200)
  })
})
