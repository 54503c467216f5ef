/**
 * Authentication and surfaces over real HTTP: the local token, the app secret
 * that makes a request the person's, person-only routes (derived from the
 * contract) refusing the cli-api surface, the public routes, and the audit
 * log being append-only in the database file itself.
 */
import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, JSONSchema, Option, Schema } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { NodeApi } from "../../schema/node/Api.js"
import { PersonOnly } from "../../schema/node/Security.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({}))

// ---------------------------------------------------------------------------
// Person-only routes, from the contract

/** A minimal value that fits a JSON Schema: required members only, first enum value, sample strings. */
const sampleOf = (schema: any, defs: Record<string, any>): unknown => {
  if (schema === undefined || schema === null || typeof schema !== "object") return null
  if (typeof schema.$ref === "string") return sampleOf(defs[schema.$ref.replace("#/$defs/", "")], defs)
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if ("const" in schema) return schema.const
  if (Array.isArray(schema.anyOf) && schema.anyOf.length > 0) return sampleOf(schema.anyOf[0], defs)
  if (Array.isArray(schema.oneOf) && schema.oneOf.length > 0) return sampleOf(schema.oneOf[0], defs)
  switch (schema.type) {
    case "object": {
      const out: Record<string, unknown> = {}
      for (const name of (schema.required ?? []) as Array<string>) out[name] = sampleOf(schema.properties?.[name], defs)
      return out
    }
    case "array":
      return []
    case "string":
      return schema.minLength > 6 ? "s".repeat(schema.minLength) : "sample"
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1
    case "boolean":
      return true
    default:
      return null
  }
}

interface PersonOnlyRoute {
  readonly method: string
  readonly path: string
  readonly body: unknown
}

const personOnlyRoutes: ReadonlyArray<PersonOnlyRoute> = (() => {
  const rows: Array<PersonOnlyRoute> = []
  HttpApi.reflect(NodeApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      const tags: ReadonlySet<unknown> = middleware
      if (!tags.has(PersonOnly)) return
      const body = Option.match(endpoint.payloadSchema, {
        onNone: () => undefined,
        onSome: (payload) => {
          const json: any = JSONSchema.make(Schema.encodedSchema(payload as unknown as Schema.Schema<unknown>))
          return sampleOf(json, json.$defs ?? {})
        }
      })
      rows.push({
        method: endpoint.method,
        path: endpoint.path.replace(/:(\w+)/g, (_, name: string) => `sample-${name}`),
        body: endpoint.method === "GET" || endpoint.method === "DELETE" ? undefined : body ?? {}
      })
    }
  })
  return rows
})()

/** A sample of routes any token holder may call. */
const authenticatedRoutes: ReadonlyArray<readonly [string, string, unknown]> = [
  ["GET", "/node", undefined],
  ["GET", "/conversations", undefined],
  ["POST", "/conversations", {}],
  ["POST", "/conversations/conv_x/messages", { text: "hello" }],
  ["POST", "/conversations/conv_x/messages/stream", { text: "hello" }],
  ["GET", "/conversations/conv_x/timeline", undefined],
  ["POST", "/conversations/conv_x/questions/q_x/answer", { text: "yes" }],
  ["POST", "/stop", undefined],
  ["GET", "/inbox", undefined],
  ["GET", "/map-tiles", undefined],
  ["GET", "/themes", undefined]
]

// ---------------------------------------------------------------------------
// Helpers

interface SqliteDatabase {
  prepare(sql: string): { all(...params: Array<unknown>): Array<any>; run(...params: Array<unknown>): unknown }
  close(): void
}
const loadCjs = createRequire(import.meta.url)
const Database = loadCjs("better-sqlite3") as new(file: string, options?: { readonly readonly?: boolean }) => SqliteDatabase

const withDatabase = <A>(dataDir: string, readonly: boolean, f: (db: SqliteDatabase) => A): A => {
  const db = new Database(path.join(dataDir, "node.db"), { readonly })
  try {
    return f(db)
  } finally {
    db.close()
  }
}

const refusedRows = (dataDir: string) =>
  withDatabase(dataDir, true, (db) =>
    db.prepare("SELECT * FROM audit_log WHERE kind = 'person-only.refused' ORDER BY id").all().map((row: any) => ({
      ...row,
      detail: JSON.parse(row.detail)
    })))

const expectError = (response: { readonly status: number; readonly body: any }, status: number, code: string, what: string) => {
  expect(response.status, what).toBe(status)
  expect(response.body, what).toMatchObject({ code, message: expect.any(String) })
}

// ---------------------------------------------------------------------------

describe("the local token", () => {
  it("the contract has the person-only routes of the spec", () => {
    expect(personOnlyRoutes.length).toBeGreaterThanOrEqual(14)
    expect(personOnlyRoutes.map((r) => `${r.method} ${r.path}`)).toContain(
      "POST /app-intents/host-control/sample-controlId"
    )
  })

  it.scoped("is required on authenticated routes: none or a wrong one is 401 UNAUTHENTICATED", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      for (const [method, route, body] of authenticatedRoutes) {
        for (const as of ["none", "wrong-token"] as const) {
          const response = yield* node.request(method, route, { as, ...(body === undefined ? {} : { body }) })
          expectError(response, 401, "UNAUTHENTICATED", `${as} ${method} ${route}`)
        }
      }
      // The app secret is no substitute for the token.
      const secretOnly = yield* node.request("GET", "/conversations", {
        as: "none",
        headers: { "x-app-secret": NodeServer.appSecret }
      })
      expectError(secretOnly, 401, "UNAUTHENTICATED", "app secret without token")
      const wrongScheme = yield* node.request("GET", "/conversations", {
        as: "none",
        headers: { authorization: `Basic ${node.token}` }
      })
      expectError(wrongScheme, 401, "UNAUTHENTICATED", "token under another scheme")
      // Nothing was created by the refused requests.
      const list = yield* node.request("GET", "/conversations", { as: "cli-api" })
      expect(list.status).toBe(200)
      expect(list.body.conversations).toEqual([])
    })))

  it.scoped("is required on every person-only route: none or a wrong one is 401, never 403", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      for (const route of personOnlyRoutes) {
        for (const as of ["none", "wrong-token"] as const) {
          const response = yield* node.request(route.method, route.path, {
            as,
            ...(route.body === undefined ? {} : { body: route.body })
          })
          expectError(response, 401, "UNAUTHENTICATED", `${as} ${route.method} ${route.path}`)
        }
      }
      // A request without the token is not a refused person-only call: nothing is audited as such.
      expect(refusedRows(node.dataDir)).toEqual([])
    })))
})

describe("person-only routes", () => {
  it.scoped("refuse the cli-api surface with 403 PERSON_ONLY on every route, each audited", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      for (const route of personOnlyRoutes) {
        const response = yield* node.request(route.method, route.path, {
          as: "cli-api",
          ...(route.body === undefined ? {} : { body: route.body })
        })
        expectError(response, 403, "PERSON_ONLY", `cli-api ${route.method} ${route.path}`)
      }
      const audit = refusedRows(node.dataDir)
      expect(audit.map((row) => `${row.detail.method} ${row.detail.path}`)).toEqual(
        personOnlyRoutes.map((route) => `${route.method} ${route.path}`)
      )
      expect(audit.every((row) => row.surface === "cli-api")).toBe(true)
    })))

  it.scoped("never refuse the person surface with PERSON_ONLY", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      for (const as of ["person", "voice"] as const) {
        for (const route of personOnlyRoutes) {
          const response = yield* node.request(route.method, route.path, {
            as,
            ...(route.body === undefined ? {} : { body: route.body })
          })
          const what = `${as} ${route.method} ${route.path}: ${JSON.stringify(response.body)}`
          expect(response.status, what).not.toBe(401)
          expect(response.body?.code, what).not.toBe("PERSON_ONLY")
          expect(response.status, what).not.toBe(500)
          if (response.status >= 400) {
            expect(response.body, what).toMatchObject({ code: expect.any(String), message: expect.any(String) })
          }
        }
      }
      expect(refusedRows(node.dataDir)).toEqual([])
    })))

  it.scoped("a wrong app secret is the cli-api surface", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const wrongSecret = { "x-app-secret": "not-the-app-secret" }
      for (const route of personOnlyRoutes) {
        const response = yield* node.request(route.method, route.path, {
          as: "cli-api",
          headers: wrongSecret,
          ...(route.body === undefined ? {} : { body: route.body })
        })
        expectError(response, 403, "PERSON_ONLY", `wrong secret ${route.method} ${route.path}`)
      }
      // Its messages are recorded with the cli-api origin.
      const created = yield* node.request("POST", "/conversations", { as: "cli-api", headers: wrongSecret, body: {} })
      expect(created.status).toBe(201)
      const sent = yield* node.request("POST", `/conversations/${created.body.conversationId}/messages`, {
        as: "cli-api",
        headers: { ...wrongSecret, "x-app-channel": "voice" },
        body: { text: "hello" }
      })
      expect(sent.status).toBe(200)
      expect(sent.body.timeline.entries[0]).toMatchObject({ role: "user", origin: "cli-api", channel: "text" })
    })))

  it.scoped("x-app-channel: voice without the app secret is not a person", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const voice = { "x-app-channel": "voice" }
      for (const route of personOnlyRoutes) {
        const response = yield* node.request(route.method, route.path, {
          as: "cli-api",
          headers: voice,
          ...(route.body === undefined ? {} : { body: route.body })
        })
        expectError(response, 403, "PERSON_ONLY", `voice header ${route.method} ${route.path}`)
      }
      const created = yield* node.request("POST", "/conversations", { as: "cli-api", body: {} })
      const sent = yield* node.request("POST", `/conversations/${created.body.conversationId}/messages`, {
        as: "cli-api",
        headers: voice,
        body: { text: "hello" }
      })
      expect(sent.status).toBe(200)
      expect(sent.body.timeline.entries[0]).toMatchObject({ role: "user", origin: "cli-api", channel: "text" })
      // With the app secret the same header makes it a spoken message of the person.
      const spoken = yield* node.request("POST", `/conversations/${created.body.conversationId}/messages`, {
        as: "voice",
        body: { text: "hello again" }
      })
      expect(spoken.status).toBe(200)
      expect(spoken.body.timeline.entries[0]).toMatchObject({ role: "user", origin: "person", channel: "voice" })
    })))
})

describe("public routes", () => {
  it.scoped("GET /health needs no token and names no identity", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const identity = JSON.parse(fs.readFileSync(path.join(node.dataDir, "identity.json"), "utf8"))
      for (const as of ["none", "wrong-token", "cli-api"] as const) {
        const response = yield* node.request("GET", "/health", { as })
        expect(response.status, as).toBe(200)
        expect(response.body).toMatchObject({ status: "ok", runtime: expect.any(Object), protocol: expect.any(Object) })
        const text = JSON.stringify(response.body)
        for (const key of ["nodeId", "label", "fingerprint", "localToken", "token", "homeNodeId"]) {
          expect(text, key).not.toContain(`"${key}"`)
        }
        for (const value of [identity.nodeId, identity.label, identity.fingerprint, identity.localToken, NodeServer.appSecret]) {
          expect(text).not.toContain(value)
        }
      }
    })))

  // Only the surfaces this node serves; test/node/Discovery.test.ts requests every endpoint listed.
  it.scoped("GET /.well-known/app.json lists the api and cli surfaces without a token", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const response = yield* node.request("GET", "/.well-known/app.json", { as: "none" })
      expect(response.status).toBe(200)
      const surfaces = response.body.surfaces as Array<any>
      expect(surfaces.map((s) => s.kind).sort()).toEqual(["api", "cli"])
      for (const surface of surfaces) expect(Object.keys(surface.endpoints).length, surface.kind).toBeGreaterThan(0)
      const text = JSON.stringify(response.body)
      expect(text).not.toContain(node.token)
    })))

  it.scoped("GET /openapi.json is an OpenAPI 3.1 description without the themes, appearance, inbox or experience routes", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const response = yield* node.request("GET", "/openapi.json", { as: "none" })
      expect(response.status).toBe(200)
      expect(response.body.openapi).toMatch(/^3\.1\.\d+$/)
      const paths = Object.keys(response.body.paths)
      expect(paths).toEqual(expect.arrayContaining(["/conversations", "/conversations/{id}/messages"]))
      expect(paths.filter((p) => /^\/(?:themes|appearance|inbox)(?:\/|$)|^\/preferences\/experience/.test(p))).toEqual([])
    })))
})

describe("the connection callback", () => {
  it.scoped("is public: no token is asked for", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const response = yield* node.request("GET", "/connections/callback/some-package?state=abc&code=xyz", { as: "none" })
      expect(response.status).not.toBe(401)
      expect(JSON.stringify(response.body)).not.toContain("xyz")
    })))
})

describe("the audit log", () => {
  it.scoped("cannot be updated or deleted, even directly in the database file", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const route = personOnlyRoutes[0]!
      const refused = yield* node.request(route.method, route.path, {
        as: "cli-api",
        ...(route.body === undefined ? {} : { body: route.body })
      })
      expect(refused.status).toBe(403)
      const before = withDatabase(node.dataDir, true, (db) => db.prepare("SELECT * FROM audit_log ORDER BY id").all())
      expect(before.length).toBeGreaterThan(0)

      withDatabase(node.dataDir, false, (db) => {
        expect(() => db.prepare("UPDATE audit_log SET kind = 'rewritten'").run()).toThrow(/append-only/)
        expect(() => db.prepare("UPDATE audit_log SET detail = '{}' WHERE id = ?").run(before[0].id)).toThrow()
        expect(() => db.prepare("DELETE FROM audit_log").run()).toThrow(/append-only/)
        expect(() => db.prepare("DELETE FROM audit_log WHERE id = ?").run(before[0].id)).toThrow()
      })
      const after = withDatabase(node.dataDir, true, (db) => db.prepare("SELECT * FROM audit_log ORDER BY id").all())
      expect(after).toEqual(before)
    })))
})
