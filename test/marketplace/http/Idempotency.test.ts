/**
 * Idempotency keys on both dialects: replay of a completed request (success
 * or failure), reuse with another request, a request in flight, scoping by
 * user and route, 50 simultaneous requests with one key, and, on the service
 * with the TestClock, the 24-hour replay window, the claim lease and release
 * on defects.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer, Ref, Schema, TestClock } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCuration from "../../../layers/marketplace/sql/SqlCuration.js"
import * as SqlIdempotency from "../../../layers/marketplace/sql/SqlIdempotency.js"
import { IdempotencyInProgress, NotFound } from "../../../schema/marketplace/Errors.js"
import { CurationStore } from "../../../services/marketplace/Curation.js"
import {
  claimLeaseMillis,
  Idempotency,
  type IdempotentRequest,
  replayWindowMillis,
  requestHash
} from "../../../services/marketplace/Idempotency.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { account, bearer, call } from "../fixtures/Accounts.js"
import { at, type Document, version } from "../fixtures/Listing.js"

const document: Document = {
  packages: ["alpha", "beta", "gamma", "racer"].map((name, i) => ({
    name,
    displayName: name,
    curationStatus: "listed" as const,
    updatedAt: at(i),
    versions: [version("1.0.0", i)]
  }))
}

/**
 * A claim taken by a request that is still running elsewhere (another replica):
 * on SQLite a request of the same process holds the only connection while it
 * runs, so other requests wait for it and get its replay instead.
 */
const claimedElsewhere = (request: IdempotentRequest, now: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO idempotency_keys (user_id, route, idempotency_key, request_hash, state, created_at,
      locked_until, expires_at) VALUES (${request.userId}, ${request.route}, ${request.key}, ${request.requestHash},
      'in_progress', ${new Date(now).toISOString()}, ${new Date(now + claimLeaseMillis).toISOString()},
      ${new Date(now + replayWindowMillis).toISOString()})`).pipe(Effect.orDie)

describe.each(dialects)("idempotency keys on %s", (dialect) => {
  let server: RunningMarketplace
  const cora = account("cora@example.com", "admin", { curate: ["packages:curate"] })
  const carl = account("carl@example.com", "admin", { curate: ["packages:curate"] })

  beforeAll(async () => {
    server = await startMarketplace(dialect, document, { setup: Effect.all([cora.setup, carl.setup]) })
  })
  afterAll(() => server.close())

  const post = (path: string, body: unknown, key?: string, who = cora) =>
    call(server, {
      method: "POST",
      path: `/api/v1/curation${path}`,
      body,
      headers: { ...bearer(who.account.tokens.curate!), ...(key === undefined ? {} : { "idempotency-key": key }) }
    })
  const log = (name: string) =>
    server.query(Effect.flatMap(CurationStore, (store) => store.log(name)).pipe(Effect.provide(SqlCuration.layer)))
  const statusOf = async (name: string) => (await post(`/packages/${name}/featured`, { featured: false })).body.curationStatus

  it("replays a completed request with the same status and body, without acting again", async () => {
    const first = await post("/packages/alpha/status", { status: "hidden", reason: "first" }, "key-replay")
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ name: "alpha", curationStatus: "hidden" })
    await post("/packages/alpha/status", { status: "rejected" })
    const entries = (await log("alpha")).length

    const replay = await post("/packages/alpha/status", { reason: "first", status: "hidden" }, "key-replay")
    expect(replay.status).toBe(200)
    expect(replay.text).toBe(first.text)
    expect(await log("alpha")).toHaveLength(entries)
    expect(await statusOf("alpha")).toBe("rejected")
  })

  it("answers 422 idempotency_key_reused for the same key with another body or path, and changes nothing", async () => {
    await post("/packages/beta/status", { status: "hidden" }, "key-reused")
    const entries = (await log("beta")).length
    for (const [path, body] of [["/packages/beta/status", { status: "listed" }], ["/packages/gamma/status", { status: "hidden" }]] as const) {
      const response = await post(path, body, "key-reused")
      expect(response.status).toBe(422)
      expect(response.body.error).toEqual({
        code: "idempotency_key_reused",
        message: expect.any(String),
        requestId: response.headers.get("x-request-id")
      })
    }
    expect(await log("beta")).toHaveLength(entries)
    expect(await log("gamma")).toEqual([])
  })

  it("scopes keys to the user: the same key on another route is 422 idempotency_key_reused and runs nothing", async () => {
    expect((await post("/packages/gamma/status", { status: "hidden" }, "key-scope")).status).toBe(200)
    for (const [path, body] of [
      ["/packages/gamma/featured", { featured: true }],
      ["/collections/scoped", { action: "create", title: "Scoped" }]
    ] as const) {
      const otherRoute = await post(path, body, "key-scope")
      expect(otherRoute.status).toBe(422)
      expect(otherRoute.body.error).toMatchObject({ code: "idempotency_key_reused", requestId: otherRoute.headers.get("x-request-id") })
    }
    const collection = await call(server, {
      method: "GET",
      path: "/api/v1/curation/collections/scoped",
      headers: bearer(cora.account.tokens.curate!)
    })
    expect(collection.status).toBe(404)
    const otherUser = await post("/packages/gamma/status", { status: "hidden" }, "key-scope", carl)
    expect(otherUser.body).toEqual({ name: "gamma", curationStatus: "hidden" })
    expect((await log("gamma")).map((entry) => [entry.actorId, entry.to])).toEqual([
      [cora.account.id, "hidden"],
      [carl.account.id, "hidden"]
    ])
  })

  it("replays a failure the handler answered, even after the state changed", async () => {
    const missing = await post("/collections/later", { action: "add_item", packageName: "alpha" }, "key-failure")
    expect(missing.status).toBe(404)
    expect((await post("/collections/later", { action: "create", title: "Later" })).status).toBe(200)
    const replay = await post("/collections/later", { action: "add_item", packageName: "alpha" }, "key-failure")
    expect(replay.status).toBe(404)
    expect(replay.body.error.message).toBe(missing.body.error.message)
    const state = await call(server, {
      method: "GET",
      path: "/api/v1/curation/collections/later",
      headers: bearer(cora.account.tokens.curate!)
    })
    expect(state.body.items).toEqual([])
  })

  it("answers 409 idempotency_in_progress while another replica holds the key, and changes nothing", async () => {
    const body = { status: "hidden" }
    const request: IdempotentRequest = {
      userId: cora.account.id,
      route: "POST /curation/packages/{name}/status",
      key: "key-flight",
      requestHash: requestHash("POST", "/curation/packages/alpha/status", body)
    }
    await server.query(claimedElsewhere(request, Date.now()))
    const entries = (await log("alpha")).length
    const response = await post("/packages/alpha/status", body, "key-flight")
    expect(response.status).toBe(409)
    expect(response.body.error).toEqual({
      code: "idempotency_in_progress",
      message: expect.any(String),
      requestId: response.headers.get("x-request-id")
    })
    expect(await log("alpha")).toHaveLength(entries)
  })

  it("gives 50 simultaneous requests with one key exactly one effect", async () => {
    const before = (await log("racer")).length
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => post("/packages/racer/status", { status: "hidden", reason: "race" }, "key-race"))
    )
    expect(await log("racer")).toHaveLength(before + 1)
    const ok = responses.filter((response) => response.status === 200)
    expect(ok.length).toBeGreaterThan(0)
    for (const response of ok) expect(response.body).toEqual({ name: "racer", curationStatus: "hidden" })
    for (const response of responses.filter((response) => response.status !== 200)) {
      expect(response.status).toBe(409)
      expect(response.body.error.code).toBe("idempotency_in_progress")
    }
  })

  it("bounds the key to 1-255 characters", async () => {
    expect((await post("/packages/beta/featured", { featured: false }, "k".repeat(255))).status).toBe(200)
    for (const key of ["", "k".repeat(256)]) {
      const response = await post("/packages/beta/featured", { featured: false }, key)
      expect(response.status).toBe(400)
      expect(response.body.error.code).toBe("validation_failed")
      expect(response.body.error.details.issues[0].path).toBe("idempotency-key")
    }
  })

  describe("on the service", () => {
    const request = (key: string): IdempotentRequest => ({
      userId: "usr_clock",
      route: "POST /test",
      key,
      requestHash: requestHash("POST", "/test", { n: 1 })
    })
    const counted = { success: Schema.Number, failure: NotFound }
    const provide = <A, E>(effect: Effect.Effect<A, E, Idempotency | SqlClient.SqlClient>) =>
      effect.pipe(Effect.provide(SqlIdempotency.layer.pipe(Layer.provideMerge(Database.layer(server.database.parsed)))))

    it.effect("replays for 24 hours after completion, then forgets", () =>
      provide(Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const runs = yield* Ref.make(0)
        const act = idempotency.run(request("window"), counted, Ref.updateAndGet(runs, (n) => n + 1))
        expect(yield* act).toBe(1)
        yield* TestClock.adjust("23 hours")
        yield* TestClock.adjust("59 minutes")
        expect(yield* act).toBe(1)
        yield* TestClock.adjust("61 seconds")
        expect(yield* act).toBe(2)
        expect(yield* Ref.get(runs)).toBe(2)
      })))

    it.effect("replays a stored failure, and releases the key after a defect", () =>
      provide(Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const failed = yield* Effect.exit(
          idempotency.run(request("failure"), counted, Effect.fail(new NotFound({ message: "gone" })))
        )
        const replayed = yield* Effect.exit(idempotency.run(request("failure"), counted, Effect.succeed(7)))
        expect(replayed).toEqual(failed)
        expect(Exit.isFailure(replayed)).toBe(true)

        const died = yield* Effect.exit(idempotency.run(request("defect"), counted, Effect.die("boom")))
        expect(Exit.isFailure(died)).toBe(true)
        expect(yield* idempotency.run(request("defect"), counted, Effect.succeed(8))).toBe(8)
      })))

    it.effect("lets another request take over a claim left in progress past its lease", () =>
      provide(Effect.gen(function*() {
        const idempotency = yield* Idempotency
        yield* claimedElsewhere(request("lease"), 0)
        const blocked = yield* Effect.flip(idempotency.run(request("lease"), counted, Effect.succeed(1)))
        expect(blocked).toBeInstanceOf(IdempotencyInProgress)
        yield* TestClock.adjust("4 minutes")
        expect(yield* Effect.flip(idempotency.run(request("lease"), counted, Effect.succeed(1)))).toBeInstanceOf(
          IdempotencyInProgress
        )
        yield* TestClock.adjust("1 minute")
        expect(yield* idempotency.run(request("lease"), counted, Effect.succeed(2))).toBe(2)
      })))
  })
})
