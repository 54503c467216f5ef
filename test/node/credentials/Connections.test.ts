/**
 * Connecting a package's account, on a real node over real HTTP and the test clock: POST
 * /connections/{packageId}/start issues a single-use state (stored only as its hash) and the callback URL;
 * GET /connections/callback/{packageId} with that state stores the provider's code as the package's
 * credential and answers a short page that never repeats the code or the state. A spent, expired, unknown or
 * other package's state, a missing one, a repeated parameter and a provider's refusal store nothing. The state
 * survives a restart of the node until it expires.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { query } from "../../support/NodeFixtures.js"
import { makeDataDir, TestNode } from "../../support/NodeServer.js"
import { call, dataDir, expectNoLeak, install, logLines, packageFolder, storedSecrets, withNode } from "./Fixtures.js"

const alpha = "@clark-tests/alpha"
const beta = "@clark-tests/beta"
const codeSecret = (packageId: string) => `package:${encodeURIComponent(packageId)}:connection_code`

/** Not recorded: its answer is where the state is meant to be. */
const start = (packageId: string, as: "person" | "cli-api" | "none" = "cli-api") =>
  Effect.flatMap(TestNode, (node) => node.request("POST", `/connections/${encodeURIComponent(packageId)}/start`, { as }))

/** A state issued for the package (the test fails if none is). */
const stateFor = (packageId: string) =>
  Effect.flatMap(start(packageId), (response) =>
    response.status === 200 ? Effect.succeed(response.body.state as string) : Effect.dieMessage(JSON.stringify(response.body)))

const callback = (packageId: string, query: string) =>
  call("GET", `/connections/callback/${encodeURIComponent(packageId)}${query === "" ? "" : `?${query}`}`, { as: "none" })

const q = (params: Record<string, string>) => new URLSearchParams(params).toString()

/** A page as the browser gets it: HTML, no script allowed, not cached, no referrer, no redirect. */
const expectPage = (response: { readonly status: number; readonly headers: Headers; readonly body: any }, status: number, text: string) => {
  expect(response.status, String(response.body)).toBe(status)
  expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
  expect(response.headers.get("content-security-policy")).toContain("default-src 'none'")
  expect(response.headers.get("cache-control")).toBe("no-store")
  expect(response.headers.get("referrer-policy")).toBe("no-referrer")
  expect(response.headers.get("x-content-type-options")).toBe("nosniff")
  expect(response.headers.get("location")).toBeNull()
  expect(response.headers.get("set-cookie")).toBeNull()
  expect(typeof response.body).toBe("string")
  expect(response.body).toContain(text)
  expect(response.body).not.toContain("<script")
}

const connectionRows = (dir: string) => query(dir, "SELECT package_id, expires_at_ms FROM connection_states ORDER BY seq")

describe("POST /connections/{packageId}/start", () => {
  it.scoped("issues a state for an installed package, keeps only its hash, and names the callback URL", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(packageFolder(alpha))
      const started = yield* start(alpha)
      expect(started.status).toBe(200)
      expect(started.body).toEqual({
        packageId: alpha,
        state: expect.stringMatching(/^cst_[A-Za-z0-9_-]{43}$/),
        callbackUrl: `${node.baseUrl}/connections/callback/%40clark-tests%2Falpha`,
        expiresAt: "1970-01-01T00:10:00.000Z"
      })
      expect(connectionRows(node.dataDir)).toEqual([{ package_id: alpha, expires_at_ms: 600_000 }])
      // The state itself is in no file of the data dir (the database holds its SHA-256 only).
      const holders = fs.readdirSync(node.dataDir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && fs.readFileSync(path.join(entry.parentPath, entry.name)).includes(started.body.state))
      expect(holders).toEqual([])
      // Two starts are two states.
      expect((yield* start(alpha, "person")).body.state).not.toBe(started.body.state)
      expect(query(node.dataDir, "SELECT kind, surface, detail FROM audit_log WHERE kind = 'package.connection.started'"))
        .toEqual([
          { kind: "package.connection.started", surface: "cli-api", detail: JSON.stringify({ packageId: alpha }) },
          { kind: "package.connection.started", surface: "person", detail: JSON.stringify({ packageId: alpha }) }
        ])
      expect(logLines.filter((line) => line.includes(started.body.state))).toEqual([])
    })))

  it.scoped("refuses a package not installed (404), a map key consumer (400) and a caller without the token (401)", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      expect(yield* start("@clark-tests/nowhere")).toMatchObject({ status: 404, body: { code: "RESOURCE_NOT_FOUND" } })
      yield* install(packageFolder("@clark-tests/map-consumer", [{ kind: "capability", value: "maps:tiles", access: "read" }]))
      expect(yield* start("@clark-tests/map-consumer")).toMatchObject({
        status: 400,
        body: { code: "INVALID_INPUT", field: "packageId", reason: "maps-tiles-consumer" }
      })
      yield* install(packageFolder(alpha))
      expect(yield* start(alpha, "none")).toMatchObject({ status: 401, body: { code: "UNAUTHENTICATED" } })
      expect(connectionRows(dir)).toEqual([])
    })))

  it.scoped("keeps at most 16 waiting states per package: the oldest is dropped", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      yield* install(packageFolder(alpha))
      const first = yield* stateFor(alpha)
      for (let i = 0; i < 16; i++) yield* stateFor(alpha)
      expect(connectionRows(dir)).toHaveLength(16)
      expectPage(yield* callback(alpha, q({ state: first, code: "code-for-dropped" })), 404, "not valid")
      expect(storedSecrets(dir)).toEqual({})
    })))
})

describe("GET /connections/callback/{packageId}", () => {
  it.scoped("a valid state stores the code as the package's credential and answers a page without code or state; once", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      yield* install(packageFolder(alpha))
      const state = yield* stateFor(alpha)
      const code = "code-LEAK-3f9a0c7e21"
      const connected = yield* callback(alpha, q({ state, code, scope: "read" }))
      expectPage(connected, 200, "Connected. You can close this window.")
      expect(storedSecrets(dir)).toEqual({ [codeSecret(alpha)]: code })
      expect(connectionRows(dir)).toEqual([])

      // The same state again: refused, the stored code unchanged.
      const again = yield* callback(alpha, q({ state, code: "code-LEAK-second" }))
      expectPage(again, 404, "not valid")
      expect(storedSecrets(dir)).toEqual({ [codeSecret(alpha)]: code })
      expect(query(dir, "SELECT detail FROM audit_log WHERE kind = 'package.connection.returned'")).toEqual([
        { detail: JSON.stringify({ packageId: alpha, outcome: "connected" }) }
      ])
      expectNoLeak(expect, code, "code-LEAK-second", state)
    })))

  it.scoped("of concurrent returns with one state exactly one stores its code", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      yield* install(packageFolder(alpha))
      const state = yield* stateFor(alpha)
      const answers = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => Effect.map(callback(alpha, q({ state, code: `code-${i}` })), (response) => [i, response.status] as const),
        { concurrency: "unbounded" }
      )
      const winners = answers.filter(([, status]) => status === 200)
      expect(winners).toHaveLength(1)
      expect(answers.filter(([, status]) => status === 404)).toHaveLength(19)
      expect(storedSecrets(dir)).toEqual({ [codeSecret(alpha)]: `code-${winners[0]![0]}` })
    })))

  it.scoped("a state expires ten minutes after it was issued, by the node's clock", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      yield* install(packageFolder(alpha))
      const early = yield* stateFor(alpha)
      const late = yield* stateFor(alpha)
      yield* TestClock.adjust(Duration.millis(600_000 - 1))
      expectPage(yield* callback(alpha, q({ state: early, code: "in-time-code" })), 200, "Connected.")
      yield* TestClock.adjust(Duration.millis(1))
      expectPage(yield* callback(alpha, q({ state: late, code: "too-late-code" })), 404, "expired")
      expect(storedSecrets(dir)).toEqual({ [codeSecret(alpha)]: "in-time-code" })
    })))

  it.scoped("another package's state is refused and spent; nothing is stored for either package", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      yield* install(packageFolder(alpha))
      yield* install(packageFolder(beta))
      const betaState = yield* stateFor(beta)
      expectPage(yield* callback(alpha, q({ state: betaState, code: "crossed-code" })), 404, "another package")
      // Shown at the wrong package's door, it is spent: the right door refuses it too.
      expectPage(yield* callback(beta, q({ state: betaState, code: "crossed-code" })), 404, "not valid")
      expect(storedSecrets(dir)).toEqual({})
    })))

  it.scoped("a provider's refusal, a return without a code, no state, a repeated or unknown state: pages, nothing stored", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      yield* install(packageFolder(alpha))
      const declined = yield* stateFor(alpha)
      const page = yield* callback(alpha, q({ state: declined, error: "access_denied", error_description: "<b>no</b>", code: "ignored-code" }))
      expectPage(page, 200, "The connection was not made")
      expect(page.body).not.toContain("access_denied")
      expect(page.body).not.toContain("<b>no</b>")
      // The refusal spent the state.
      expectPage(yield* callback(alpha, q({ state: declined, code: "later-code" })), 404, "not valid")

      const bare = yield* stateFor(alpha)
      expectPage(yield* callback(alpha, q({ state: bare })), 400, "had no code")
      expectPage(yield* callback(alpha, q({ code: "stateless-code" })), 400, "no connection state")
      expectPage(yield* callback(alpha, ""), 400, "no connection state")
      const repeated = yield* stateFor(alpha)
      expectPage(yield* callback(alpha, `state=${repeated}&state=${repeated}&code=twice-code`), 400, "Nothing was stored")
      // A repeated parameter spends nothing: the state still works.
      expectPage(yield* callback(alpha, q({ state: repeated, code: "good-code" })), 200, "Connected.")
      expectPage(yield* callback(alpha, q({ state: "cst_made-up", code: "forged-code" })), 404, "not valid")
      expectPage(yield* callback("@clark-tests/nowhere", q({ state: "x", code: "forged-code" })), 404, "not valid")
      expectPage(yield* callback(alpha, q({ state: "s", code: "c".repeat(8193) })), 400, "Nothing was stored")
      expect(storedSecrets(dir)).toEqual({ [codeSecret(alpha)]: "good-code" })
      expect(query(dir, "SELECT detail FROM audit_log WHERE kind = 'package.connection.returned' ORDER BY id")).toEqual([
        { detail: JSON.stringify({ packageId: alpha, outcome: "declined" }) },
        { detail: JSON.stringify({ packageId: alpha, outcome: "incomplete" }) },
        { detail: JSON.stringify({ packageId: alpha, outcome: "connected" }) }
      ])
      expectNoLeak(expect, declined, bare, repeated, "ignored-code", "stateless-code", "twice-code", "good-code", "forged-code")
    })))

  it.scoped("the package is checked again on return: now a map key consumer (400), a broker refusing (503); nothing stored", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      const folder = packageFolder(alpha)
      yield* install(folder)
      const state = yield* stateFor(alpha)
      // Reinstalled between start and return, now declaring itself a consumer of the map key.
      const file = path.join(folder, "package.json")
      const pkg = JSON.parse(fs.readFileSync(file, "utf8"))
      pkg.clark.permissions.push({ kind: "capability", value: "maps:tiles", access: "read" })
      fs.writeFileSync(file, JSON.stringify(pkg))
      yield* install(folder)
      expectPage(yield* callback(alpha, q({ state, code: "consumer-code" })), 400, "takes no credentials")
      expect(storedSecrets(dir)).toEqual({})

      yield* install(packageFolder(beta))
      expect((yield* call("POST", "/credentials", { body: { packageId: beta, name: "other", value: "other-value" } })).status).toBe(200)
      const secrets = path.join(dir, "secrets.json")
      fs.chmodSync(secrets, 0o644)
      const before = fs.readFileSync(secrets, "utf8")
      expectPage(yield* callback(beta, q({ state: yield* stateFor(beta), code: "unstored-code" })), 503, "could not store")
      expect(fs.readFileSync(secrets, "utf8")).toBe(before)
      expectNoLeak(expect, "consumer-code", "unstored-code", "other-value")
    })))

  it.scoped("a state survives a restart of the node until it expires", () =>
    Effect.gen(function*() {
      const dir = makeDataDir()
      const state = yield* Effect.scoped(withNode(Effect.gen(function*() {
        yield* install(packageFolder(alpha))
        return yield* stateFor(alpha)
      }), { dataDir: dir }))
      yield* TestClock.adjust(Duration.minutes(5))
      yield* Effect.scoped(withNode(Effect.gen(function*() {
        expectPage(yield* callback(alpha, q({ state, code: "after-restart-code" })), 200, "Connected.")
      }), { dataDir: dir }))
      expect(storedSecrets(dir)).toEqual({ [codeSecret(alpha)]: "after-restart-code" })
    }))
})
