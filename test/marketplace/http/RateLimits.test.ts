/**
 * Rate limits on a real server with small budgets, on both dialects: public
 * reads per client address, account and curation calls per credential,
 * refused credentials on the address's budget, replays free, health never
 * limited; a refusal is 429 `rate_limited` in the envelope with Retry-After
 * and the RateLimit headers, and changes nothing. On PostgreSQL two servers on
 * one database spend one budget.
 */
import { RateLimiter } from "@effect/experimental"
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer } from "node:http"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { RateLimited } from "../../../schema/marketplace/Errors.js"
import { defaultRateLimits, type RateLimitSettings } from "../../../services/marketplace/RateLimits.js"
import { HandlersLive, serveApi, ServicesLive } from "../../../src/marketplace/Server.js"
import { RateLimits, Settings } from "../../../src/marketplace/Settings.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace, testOrigin } from "../../support/MarketplaceServer.js"
import { account, bearer, call, cookie, rows } from "../fixtures/Accounts.js"
import { at, type Document, version } from "../fixtures/Listing.js"

const document: Document = {
  packages: ["alpha", "beta", "gamma"].map((name, i) => ({
    name,
    displayName: name,
    curationStatus: "listed" as const,
    updatedAt: at(i),
    versions: [version("1.0.0", i)]
  }))
}

/** Small budgets; the test client at 127.0.0.1 is a trusted proxy, so each test can be its own client. */
const limits: RateLimitSettings = {
  ...defaultRateLimits,
  publicLimit: 3,
  authenticatedLimit: 2,
  windowSeconds: 60,
  trustedProxies: ["127.0.0.1"]
}

const withLimits = (settings: RateLimitSettings) => (live: typeof ServicesLive) =>
  Layer.merge(live, Layer.succeed(RateLimits, settings))

const from = (address: string, headers: Record<string, string> = {}) => ({ "x-forwarded-for": address, ...headers })

type Response = Awaited<ReturnType<RunningMarketplace["request"]>>

const expectCounted = (response: Response, limit: number, remaining: number) => {
  expect(response.headers.get("ratelimit-limit")).toBe(String(limit))
  expect(response.headers.get("ratelimit-remaining")).toBe(String(remaining))
  const reset = Number(response.headers.get("ratelimit-reset"))
  expect(reset).toBeGreaterThan(0)
  expect(reset).toBeLessThanOrEqual(60)
}

const expectRefused = (response: Response, limit: number) => {
  expect(response.status).toBe(429)
  expect(response.body.error.code).toBe("rate_limited")
  expect(response.body.error.requestId).toBe(response.headers.get("x-request-id"))
  expect(response.body.error.details).toMatchObject({ limit, windowSeconds: 60 })
  const retryAfter = Number(response.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(response.body.error.details.retryAfter).toBe(retryAfter)
  expect(response.headers.get("ratelimit-limit")).toBe(String(limit))
  expect(response.headers.get("ratelimit-remaining")).toBe("0")
  expect(response.headers.get("ratelimit-reset")).toBe(String(retryAfter))
}

describe.each(dialects)("rate limits on %s", (dialect) => {
  let server: RunningMarketplace
  const cora = account("cora@example.com", "admin", { curate: ["packages:curate"], second: ["packages:curate"] })

  beforeAll(async () => {
    server = await startMarketplace(dialect, document, { setup: cora.setup, services: withLimits(limits) })
  })
  afterAll(() => server.close())

  const status = (name: string) =>
    server.query(rows("packages", `name = '${name}'`)).then((found) => found[0]?.curationStatus)
  const logged = () => server.query(rows("curation_log")).then((found) => found.length)

  it("counts public reads per address and refuses the one over the limit with 429 rate_limited", async () => {
    for (const remaining of [2, 1, 0]) {
      const response = await server.request("/api/v1/packages", { headers: from("198.51.100.1") })
      expect(response.status).toBe(200)
      expectCounted(response, 3, remaining)
    }
    expectRefused(await server.request("/api/v1/packages/alpha", { headers: from("198.51.100.1") }), 3)
    // Another client's budget is its own.
    const other = await server.request("/api/v1/packages/alpha", { headers: from("198.51.100.2") })
    expect(other.status).toBe(200)
    expectCounted(other, 3, 2)
    // PostgreSQL keeps the counters for every replica; a SQLite server counts in its own memory.
    const counters = await server.query(rows("rate_limit_counters"))
    expect(counters.length > 0).toBe(dialect === "postgres")
  })

  it("refuses before reading the request: a spent budget answers 429 whatever the body", async () => {
    const client = from("198.51.100.8")
    for (let i = 0; i < 3; i++) await server.request("/api/v1/me", { headers: client })
    const response = await server.request("/api/v1/curation/collections/new-one", {
      method: "POST",
      headers: { ...client, "content-type": "application/json" },
      body: "{not json"
    })
    expectRefused(response, 3)
  })

  it("counts answers that are errors too, and the typed client gets a RateLimited", async () => {
    const client = from("198.51.100.3")
    expect((await server.request("/api/v1/packages/nothing-here", { headers: client })).status).toBe(404)
    expect((await server.request("/api/v1/no-such-route", { headers: client })).status).toBe(404)
    const last = await server.request("/api/v1/categories", { headers: client })
    expect(last.status).toBe(200)
    expectCounted(last, 3, 0)
    const refused = await Effect.runPromise(
      HttpApiClient.make(MarketplaceApi, {
        baseUrl: server.baseUrl,
        transformClient: HttpClient.mapRequest(HttpClientRequest.setHeaders(client))
      }).pipe(
        Effect.flatMap((typed) => Effect.flip(typed.catalog.categories())),
        Effect.provide(FetchHttpClient.layer)
      )
    )
    expect(refused).toBeInstanceOf(RateLimited)
  })

  it("never limits health probes", async () => {
    const client = from("198.51.100.4")
    for (let i = 0; i < 4; i++) await server.request("/api/v1/packages", { headers: client })
    for (let i = 0; i < 5; i++) {
      const response = await server.request("/api/v1/health", { headers: client })
      expect(response.status).toBe(200)
      expect(response.headers.get("ratelimit-limit")).toBeNull()
    }
  })

  it("counts account and curation calls per credential, and a refused one changes nothing", async () => {
    const client = from("198.51.100.5")
    const post = (body: unknown, token = cora.account.tokens.curate!, headers: Record<string, string> = {}) =>
      call(server, {
        method: "POST",
        path: "/api/v1/curation/packages/alpha/status",
        body,
        headers: { ...client, ...bearer(token), ...headers }
      })
    const hidden = await post({ status: "hidden", reason: "one" })
    expect(hidden.status).toBe(200)
    expectCounted(hidden, 2, 1)
    const listed = await post({ status: "listed", reason: "two" })
    expect(listed.status).toBe(200)
    expectCounted(listed, 2, 0)
    const before = await logged()

    expectRefused(await post({ status: "rejected", reason: "three" }), 2)
    expect(await status("alpha")).toBe("listed")
    expect(await logged()).toBe(before)

    // The address's budget was not touched, and another credential of the same user has its own.
    expectCounted(await server.request("/api/v1/packages", { headers: client }), 3, 2)
    const second = await post({ status: "featured" }, cora.account.tokens.second!)
    expect(second.status).toBe(200)
    expectCounted(second, 2, 1)
  })

  it("lets a replay through without spending, also when the budget is spent", async () => {
    const client = from("198.51.100.6")
    const session = cora.account.session
    const post = (body: unknown, key?: string) =>
      call(server, {
        method: "POST",
        path: "/api/v1/curation/packages/beta/featured",
        body,
        headers: { ...client, ...bearer(session), ...(key === undefined ? {} : { "idempotency-key": key }) }
      })
    const first = await post({ featured: true }, "replayed")
    expect(first.status).toBe(200)
    expectCounted(first, 2, 1)
    for (let i = 0; i < 3; i++) {
      const replay = await post({ featured: true }, "replayed")
      expect(replay.status).toBe(200)
      expect(replay.body).toEqual(first.body)
      expectCounted(replay, 2, 1)
    }
    const spent = await post({ featured: false })
    expect(spent.status).toBe(200)
    expectCounted(spent, 2, 0)
    expectRefused(await post({ featured: false }, "fresh"), 2)
    const replay = await post({ featured: true }, "replayed")
    expect(replay.status).toBe(200)
    expect(replay.body).toEqual(first.body)
    // The session's cookie is the same credential as its bearer form: one budget.
    expectRefused(await server.request("/api/v1/me", { headers: { ...client, ...cookie(session) } }), 2)
  })

  it("counts calls with a missing or refused credential against the address", async () => {
    const client = from("198.51.100.7")
    const me = (headers: Record<string, string>) => server.request("/api/v1/me", { headers: { ...client, ...headers } })
    const missing = await me({})
    expect(missing.status).toBe(401)
    expectCounted(missing, 3, 2)
    const wrong = await me(bearer("cmk_wrong"))
    expect(wrong.status).toBe(401)
    expectCounted(wrong, 3, 1)
    // A session cookie on a change from another site is refused and spends the address's budget, not the session's.
    const crossSite = await call(server, {
      method: "POST",
      path: "/api/v1/curation/packages/gamma/featured",
      body: { featured: true },
      headers: { ...client, ...cookie(cora.account.session), origin: "https://evil.test" }
    })
    expect(crossSite.status).toBe(403)
    expectCounted(crossSite, 3, 0)
    expect(await status("gamma")).toBe("listed")
    expectRefused(await me(bearer("cmk_guess")), 3)
    // A valid credential from that address still has its own budget.
    const valid = await me(bearer(cora.account.tokens.second!))
    expect(valid.status).toBe(200)
    expect(valid.body.email).toBe("cora@example.com")
  })
})

describe("rate limits without a trusted proxy", () => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace("sqlite", document, {
      services: withLimits({ ...limits, trustedProxies: [], publicLimit: 2 })
    })
  })
  afterAll(() => server.close())

  it("ignores X-Forwarded-For and counts the socket's address", async () => {
    expectCounted(await server.request("/api/v1/packages", { headers: from("198.51.100.10") }), 2, 1)
    expectCounted(await server.request("/api/v1/packages", { headers: from("198.51.100.11") }), 2, 0)
    expectRefused(await server.request("/api/v1/packages", { headers: from("198.51.100.12") }), 2)
  })

  it("serves without limits when they are off", async () => {
    const off = await startMarketplace("sqlite", document, {
      services: withLimits({ ...limits, enabled: false, publicLimit: 1 })
    })
    try {
      for (let i = 0; i < 3; i++) {
        const response = await off.request("/api/v1/packages")
        expect(response.status).toBe(200)
        expect(response.headers.get("ratelimit-limit")).toBeNull()
      }
    } finally {
      await off.close()
    }
  })
})

describe("rate limits when the store fails", () => {
  let server: RunningMarketplace
  const failing = RateLimiter.layer.pipe(Layer.provide(Layer.succeed(RateLimiter.RateLimiterStore, {
    fixedWindow: () => Effect.fail(new RateLimiter.RateLimitStoreError({ message: "unreachable" })),
    tokenBucket: () => Effect.fail(new RateLimiter.RateLimitStoreError({ message: "unreachable" }))
  })))
  beforeAll(async () => {
    server = await startMarketplace("sqlite", document, {
      services: (live) => Layer.mergeAll(withLimits({ ...limits, publicLimit: 1 })(live), failing)
    })
  })
  afterAll(() => server.close())

  it("lets requests through without the headers", async () => {
    for (let i = 0; i < 3; i++) {
      const response = await server.request("/api/v1/packages")
      expect(response.status).toBe(200)
      expect(response.headers.get("ratelimit-limit")).toBeNull()
    }
  })
})

/** Another replica: a server on an existing database, as the fixture builds one. */
const replica = async (database: RunningMarketplace["database"], settings: RateLimitSettings) => {
  const runtime = ManagedRuntime.make(
    serveApi(
      HandlersLive.pipe(
        Layer.provide(withLimits(settings)(ServicesLive)),
        Layer.provide(Layer.succeed(Settings, {
          environment: "development",
          publicOrigin: testOrigin,
          siteOrigin: testOrigin,
          readCache: true
        }))
      )
    ).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide(Database.layer(database.parsed))
    )
  )
  const baseUrl = await runtime.runPromise(HttpServer.addressFormattedWith((address) => Effect.succeed(address)))
  return { baseUrl, close: () => runtime.dispose() }
}

describe("rate limits shared by two servers on one PostgreSQL database", () => {
  let first: RunningMarketplace
  let second: Awaited<ReturnType<typeof replica>>
  beforeAll(async () => {
    first = await startMarketplace("postgres", document, { services: withLimits(limits) })
    second = await replica(first.database, limits)
  })
  afterAll(async () => {
    await second.close()
    await first.close()
  })

  it("spends one budget per address on both", async () => {
    const client = from("198.51.100.20")
    const onSecond = async (path: string) => {
      const response = await fetch(`${second.baseUrl}${path}`, { headers: client })
      return { status: response.status, headers: response.headers, body: await response.json() as any, text: "" }
    }
    expectCounted(await first.request("/api/v1/packages", { headers: client }), 3, 2)
    expectCounted(await onSecond("/api/v1/packages"), 3, 1)
    expectCounted(await first.request("/api/v1/categories", { headers: client }), 3, 0)
    expectRefused(await onSecond("/api/v1/packages"), 3)
    expectRefused(await first.request("/api/v1/packages", { headers: client }), 3)
  })
})
