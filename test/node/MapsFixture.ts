/**
 * Shared by the Maps.*.test.ts files: a node over real HTTP whose every
 * response and log line is recorded for the leak checks, the tile-policy
 * values they send, and helpers reading the data dir.
 */
import { expect } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { query } from "../support/NodeFixtures.js"
import * as NodeServer from "../support/NodeServer.js"
import { type As, TestNode } from "../support/NodeServer.js"

// ---------------------------------------------------------------------------
// Recording: every response and log line of a test, for the leak checks

export const tileKey = "tk-LEAKCHECK-5e1f0a9b3c7d"

export const seen: Array<string> = []
export const logLines: Array<string> = []

export const captureLogs = Layer.merge(
  Logger.add(Logger.map(Logger.logfmtLogger, (line) => {
    logLines.push(line)
  })),
  Logger.minimumLogLevel(LogLevel.All)
)

export const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>, options: Parameters<typeof NodeServer.layer>[0] = {}) =>
  Effect.suspend(() => {
    seen.length = 0
    logLines.length = 0
    return Effect.provide(effect, NodeServer.layer(options).pipe(Layer.provide(captureLogs)))
  })

export const call = (
  method: string,
  route: string,
  options: { readonly body?: unknown; readonly as?: As } = {}
) =>
  Effect.flatMap(TestNode, (node) => node.request(method, route, options)).pipe(
    Effect.tap((response) =>
      Effect.sync(() => {
        seen.push(`${method} ${route} ${response.status} ${JSON.stringify([...response.headers.entries()])}`)
        seen.push(typeof response.body === "string" ? response.body : JSON.stringify(response.body))
      })
    )
  )

/** The key appears in no response, header, error or log line of the test so far. */
export const expectNoLeak = () => {
  expect(seen.length).toBeGreaterThan(0)
  expect(logLines.length).toBeGreaterThan(0)
  expect(seen.filter((text) => text.includes(tileKey))).toEqual([])
  expect(logLines.filter((line) => line.includes(tileKey))).toEqual([])
}

// ---------------------------------------------------------------------------
// Helpers

export const origin = "https://tiles.example.com"
export const policy = {
  origin,
  template: "/styles/base/{z}/{x}/{y}.png?lang=en",
  attribution: "© Example Maps",
  maxZoom: 19
}
export const keyed = { ...policy, credential: { secret: "maps:tiles", header: "X-Api-Key" } }
export const provider = { origin: policy.origin, attribution: policy.attribution, maxZoom: policy.maxZoom }

export const setPolicy = (value: unknown, as: As = "person") =>
  call("PUT", "/preferences/maps.tilePolicy", { body: { value }, as })
export const undo = (as: As = "person") => call("POST", "/preferences/maps.tilePolicy/undo", { as })
export const tiles = (as: As = "person") => Effect.map(call("GET", "/map-tiles", { as }), (r) => r.body)
export const putKey = (keyOrigin: string, value = tileKey, as: As = "person") =>
  call("PUT", "/map-tiles/key", { body: { origin: keyOrigin, value }, as })

export const expectError = (response: { readonly status: number; readonly body: any }, status: number, code: string, what = "") => {
  expect(response.status, `${what}: ${JSON.stringify(response.body)}`).toBe(status)
  expect(response.body, what).toMatchObject({ code, message: expect.any(String) })
}

export const dataDir = Effect.map(TestNode, (node) => node.dataDir)

export const storedRows = (dir: string) => ({
  preferences: query(dir, "SELECT * FROM preferences ORDER BY key"),
  undo: query(dir, "SELECT * FROM preference_undo ORDER BY key")
})

/** Every file of the data dir but the secrets file that holds the text (database, WAL, identity…). */
export const filesHolding = (dir: string, text: string) =>
  fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => fs.readFileSync(file).includes(Buffer.from(text)))
    .map((file) => path.relative(dir, file))

export const with_ = (change: Record<string, unknown>) => ({ ...policy, ...change })
export const withCredential = (credential: unknown) => ({ ...policy, credential })

/** A template of exactly `length` characters. */
export const templateOf = (length: number) => {
  const tail = "/{z}/{x}/{y}.png"
  return `/${"a".repeat(length - tail.length - 1)}${tail}`
}
