/**
 * POST /credentials on a real node over real HTTP with real packages installed from folders: a credential is
 * stored in the broker's file under its package's name and never answered; the map key's name, map key
 * consumers and packages not installed are refused with nothing stored; malformed bodies are 400
 * INVALID_INPUT without the value; a broker that cannot be used is 503; the value is in no response, header
 * or log line.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import { secretsFile } from "../../../layers/node/fs/SecretBroker.js"
import { query } from "../../support/NodeFixtures.js"
import { TestNode } from "../../support/NodeServer.js"
import { call, dataDir, expectNoLeak, install, logLines, packageFolder, storedSecrets, withNode } from "./Fixtures.js"

const value = "cred-LEAKCHECK-8d2f41a7c9e3"
const alpha = "@clark-tests/alpha"
const alphaSecret = (name: string) => `package:%40clark-tests%2Falpha:${name}`

const store = (body: unknown, as: "person" | "cli-api" | "none" = "person") => call("POST", "/credentials", { body, as })

const expectRefusal = (response: { readonly status: number; readonly body: any }, status: number, code: string, what = "") => {
  expect(response.status, `${what}: ${JSON.stringify(response.body)}`).toBe(status)
  expect(response.body, what).toMatchObject({ code, message: expect.any(String) })
}

describe("POST /credentials", () => {
  it.scoped("stores a credential of an installed package under its package's name, answers without the value", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      const packageId = yield* install(packageFolder(alpha))
      const stored = yield* store({ packageId, name: "API-Token", value })
      expect(stored).toMatchObject({ status: 200, body: { packageId: alpha, name: "api_token", stored: true } })
      expect(Object.keys(stored.body).sort()).toEqual(["name", "packageId", "stored"])
      expect(storedSecrets(dir)).toEqual({ [alphaSecret("api_token")]: value })
      expect(fs.statSync(secretsFile(dir)).mode & 0o777).toBe(0o600)

      // Any token holder may store one (a machine surface too); another spelling of the name replaces it.
      const replaced = yield* store({ packageId, name: "api.token", value: `${value}-2` }, "cli-api")
      expect(replaced).toMatchObject({ status: 200, body: { name: "api_token", stored: true } })
      yield* store({ packageId, name: "region", value: "eu-west" })
      expect(storedSecrets(dir)).toEqual({ [alphaSecret("api_token")]: `${value}-2`, [alphaSecret("region")]: "eu-west" })

      // Audited by name and surface, never the value.
      const audited = query(dir, "SELECT kind, surface, detail FROM audit_log WHERE kind = 'package.credential.stored' ORDER BY id")
      expect(audited).toEqual([
        { kind: "package.credential.stored", surface: "person", detail: JSON.stringify({ packageId: alpha, name: "api_token" }) },
        { kind: "package.credential.stored", surface: "cli-api", detail: JSON.stringify({ packageId: alpha, name: "api_token" }) },
        { kind: "package.credential.stored", surface: "person", detail: JSON.stringify({ packageId: alpha, name: "region" }) }
      ])
      // Nothing but the secrets file holds it.
      const holders = fs.readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && fs.readFileSync(`${entry.parentPath}/${entry.name}`).includes(value))
        .map((entry) => entry.name)
      expect(holders).toEqual(["secrets.json"])
      expectNoLeak(expect, value)
    })))

  it.scoped("refuses a package that is not installed with 404, and the map key's name first, nothing stored", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      expectRefusal(yield* store({ packageId: "@clark-tests/nowhere", name: "api_token", value }), 404, "RESOURCE_NOT_FOUND")
      // Listed but not installed is not installed either.
      const listed = yield* call("POST", "/packages/local", { body: { path: packageFolder("@clark-tests/listed") } })
      expect(listed.status).toBe(201)
      expectRefusal(yield* store({ packageId: "@clark-tests/listed", name: "api_token", value }), 404, "RESOURCE_NOT_FOUND")
      const packageId = yield* install(packageFolder(alpha))
      for (const name of ["maps:tiles", " MAPS:TILES", "maps-tiles", "maps\uFF1Atiles"]) {
        for (const packageIdOf of [packageId, "@clark-tests/nowhere"]) {
          const refused = yield* store({ packageId: packageIdOf, name, value })
          expectRefusal(refused, 400, "INVALID_INPUT", name)
          expect(refused.body).toMatchObject({ field: "name", reason: "reserved-name" })
          expect(refused.body.message).toContain("/map-tiles/key")
        }
      }
      expect(fs.existsSync(secretsFile(dir))).toBe(false)
      expectNoLeak(expect, value)
    })))

  it.scoped("refuses a package declaring itself a consumer of the map key, whatever the name, nothing stored", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      const consumer = yield* install(
        packageFolder("@clark-tests/map-consumer", [{ kind: "capability", value: "maps:tiles", access: "read" }])
      )
      for (const name of ["api_token", "tiles_key", "connection_code"]) {
        const refused = yield* store({ packageId: consumer, name, value })
        expectRefusal(refused, 400, "INVALID_INPUT", name)
        expect(refused.body).toMatchObject({ field: "packageId", reason: "maps-tiles-consumer" })
      }
      expect(fs.existsSync(secretsFile(dir))).toBe(false)
      expectNoLeak(expect, value)
    })))

  it.scoped("malformed, oversized and wrong-typed bodies are 400 INVALID_INPUT without the value, nothing stored", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const dir = node.dataDir
      const packageId = yield* install(packageFolder(alpha))
      const bodies: ReadonlyArray<readonly [string, unknown]> = [
        ["value a number", { packageId, name: "api_token", value: 1234 }],
        ["value empty", { packageId, name: "api_token", value: "" }],
        ["value too long", { packageId, name: "api_token", value: value.repeat(400) }],
        ["value an object", { packageId, name: "api_token", value: { secret: value } }],
        ["no value", { packageId, name: "api_token" }],
        ["no name", { packageId, value }],
        ["name a number", { packageId, name: 7, value }],
        ["name with a space", { packageId, name: "api token", value }],
        ["name starting with a digit", { packageId, name: "9lives", value }],
        ["name too long", { packageId, name: "a".repeat(54), value }],
        ["no packageId", { name: "api_token", value }],
        ["an array", [packageId, "api_token", value]]
      ]
      for (const [what, body] of bodies) {
        const refused = yield* store(body)
        expectRefusal(refused, 400, "INVALID_INPUT", what)
        expect(JSON.stringify(refused.body), what).not.toContain(value)
      }
      // Not JSON, another media type, a body over the route's limit: the node's own body rules.
      const raw = (body: string, contentType: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${node.baseUrl}/credentials`, {
            method: "POST",
            headers: { ...node.headers("person"), "content-type": contentType },
            body
          })
          return { status: response.status, body: await response.text() }
        })
      for (
        const [what, body, contentType] of [
          ["broken JSON", `{"packageId": "${packageId}", "name": "api_token", "value": "${value}"`, "application/json"],
          ["text/plain", JSON.stringify({ packageId, name: "api_token", value }), "text/plain"],
          ["over 256 KiB", JSON.stringify({ packageId, name: "api_token", value: value.repeat(12_000) }), "application/json"]
        ] as const
      ) {
        const refused = yield* raw(body, contentType)
        expect(refused.status, what).toBe(400)
        expect(JSON.parse(refused.body), what).toMatchObject({ code: "INVALID_INPUT" })
        expect(refused.body, what).not.toContain(value)
      }
      expect(fs.existsSync(secretsFile(dir))).toBe(false)
      // Without the token: 401 before the body is read.
      expectRefusal(yield* store({ packageId, name: "api_token", value }, "none"), 401, "UNAUTHENTICATED")
      expect(fs.existsSync(secretsFile(dir))).toBe(false)
      expectNoLeak(expect, value)
    })))

  it.scoped("a secrets file the broker refuses is 503 SECRET_STORE_UNAVAILABLE; the file is left as it was", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      const packageId = yield* install(packageFolder(alpha))
      expect((yield* store({ packageId, name: "api_token", value: "first-value" })).status).toBe(200)
      fs.chmodSync(secretsFile(dir), 0o644)
      const before = fs.readFileSync(secretsFile(dir), "utf8")
      const refused = yield* store({ packageId, name: "api_token", value })
      expectRefusal(refused, 503, "SECRET_STORE_UNAVAILABLE")
      expect(fs.readFileSync(secretsFile(dir), "utf8")).toBe(before)
      // The reason is logged (names the mode, never a value); the response says only that nothing was stored.
      expect(logLines.some((line) => line.includes("open to other users"))).toBe(true)
      expect(refused.body.message).not.toContain("0644")
      expectNoLeak(expect, value, "first-value")
    })))
})
