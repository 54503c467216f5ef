import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import pg from "pg"
import { adminUrl, dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"

describe.each(dialects)("GET /health on %s", (dialect) => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace(dialect, {})
  })
  afterAll(() => server.close())

  it("answers 200 after a live database round-trip", async () => {
    const { status, body, headers } = await server.request("/api/v1/health")
    expect(status).toBe(200)
    expect(body).toEqual({
      status: "ok",
      environment: "development",
      checkedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      checks: { database: "ok" }
    })
    expect(headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("decodes through the typed client", async () => {
    const health = await server.client((client) => client.system.health())
    expect(health.status).toBe("ok")
  })
})

describe("GET /health when the database fails", () => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace("postgres", {})
  })
  afterAll(() => server.close())

  it("answers 503 with the Health body, status degraded", async () => {
    const database = new URL(server.database.url).pathname.slice(1)
    const admin = new pg.Client({ connectionString: adminUrl })
    await admin.connect()
    await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`)
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [database])
    await admin.end()

    const { status, body, headers } = await server.request("/api/v1/health")
    expect(status).toBe(503)
    expect(body).toMatchObject({ status: "degraded", checks: { database: "error" } })
    expect(body.error).toBeUndefined()
    expect(headers.get("x-request-id")).toBeTruthy()
  })
})

describe("GET / and GET /api/v1", () => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace("sqlite", {})
  })
  afterAll(() => server.close())

  it.each(["/", "/api/v1"])("%s answers a short index pointing to the description and the health", async (path) => {
    const { status, body, headers } = await server.request(path)
    expect(status).toBe(200)
    expect(headers.get("content-type")).toMatch(/^application\/json/)
    expect(headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(body).toEqual({
      name: "Clark Marketplace API",
      version: "1.0.0",
      links: { openapi: "/api/v1/openapi.json", health: "/api/v1/health" }
    })
    for (const link of Object.values<string>(body.links)) expect((await server.request(link)).status).toBe(200)
  })

  it("leaves other unknown paths a 404 not_found in the envelope", async () => {
    const { status, body } = await server.request("/api/v2")
    expect(status).toBe(404)
    expect(body.error.code).toBe("not_found")
  })
})
