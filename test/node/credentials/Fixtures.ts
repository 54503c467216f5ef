/**
 * What the credential and connection tests share: declarative packages made from the harbour-theme example
 * under names of their own (installed at once, no approval), a node whose log lines are captured, raw calls
 * recorded for the leak checks, and the secrets file read as the broker wrote it.
 */
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { secretsFile } from "../../../layers/node/fs/SecretBroker.js"
import * as NodeServer from "../../support/NodeServer.js"
import { type As, TestNode } from "../../support/NodeServer.js"

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../examples/packages")

export interface Permission {
  readonly kind: string
  readonly value: string
  readonly access: string | null
}

/** A copy of the harbour-theme example named `name`, with `permissions` added to its manifest. */
export const packageFolder = (name: string, permissions: ReadonlyArray<Permission> = []) => {
  const target = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clark-cred-pkg-")), "pkg")
  fs.cpSync(path.join(examples, "harbour-theme"), target, { recursive: true })
  const file = path.join(target, "package.json")
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"))
  pkg.name = name
  pkg.clark.permissions = [...(pkg.clark.permissions ?? []), ...permissions]
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2))
  return target
}

/** Every response (status, headers, body) and log line of the running test, for the leak checks. */
export const seen: Array<string> = []
export const logLines: Array<string> = []

const captureLogs = Layer.merge(
  Logger.add(Logger.map(Logger.logfmtLogger, (line) => void logLines.push(line))),
  Logger.minimumLogLevel(LogLevel.All)
)

export const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>, options: Parameters<typeof NodeServer.layer>[0] = {}) =>
  Effect.suspend(() => {
    seen.length = 0
    logLines.length = 0
    return Effect.provide(effect, NodeServer.layer(options).pipe(Layer.provide(captureLogs)))
  })

/** A raw call, its answer recorded. */
export const call = (
  method: string,
  route: string,
  options: { readonly body?: unknown; readonly as?: As; readonly headers?: Record<string, string> } = {}
) =>
  Effect.flatMap(TestNode, (node) => node.request(method, route, options)).pipe(
    Effect.tap((response) =>
      Effect.sync(() => {
        // The route without its query: the request is the test's own words, the answer is what is checked.
        seen.push(`${method} ${route.split("?")[0]} ${response.status} ${JSON.stringify([...response.headers.entries()])}`)
        seen.push(typeof response.body === "string" ? response.body : JSON.stringify(response.body))
      })
    )
  )

/** Lists the folder and installs it as the person; answers the package id. */
export const install = (folder: string) =>
  Effect.gen(function*() {
    const listing = yield* call("POST", "/packages/local", { body: { path: folder } })
    if (listing.status !== 201) return yield* Effect.dieMessage(`listing: ${JSON.stringify(listing.body)}`)
    const installed = yield* call("POST", "/packages/install", {
      body: { packageId: listing.body.packageId, localDigest: listing.body.contentDigest }
    })
    if (installed.status !== 200) return yield* Effect.dieMessage(`install: ${JSON.stringify(installed.body)}`)
    return listing.body.packageId as string
  })

/** The secrets the broker's file holds, as plain values by name ({} when there is no file). */
export const storedSecrets = (dataDir: string): Record<string, string> => {
  const file = secretsFile(dataDir)
  if (!fs.existsSync(file)) return {}
  const parsed = JSON.parse(fs.readFileSync(file, "utf8"))
  return Object.fromEntries(Object.entries<any>(parsed.secrets).map(([name, secret]) => [name, secret.value]))
}

/** None of `values` appears in any recorded response, header or log line of the test so far. */
export const expectNoLeak = (expect: (value: unknown) => any, ...values: ReadonlyArray<string>) => {
  expect(seen.length).toBeGreaterThan(0)
  expect(logLines.length).toBeGreaterThan(0)
  for (const value of values) {
    expect(seen.filter((text) => text.includes(value))).toEqual([])
    expect(logLines.filter((line) => line.includes(value))).toEqual([])
  }
}

export const dataDir = Effect.map(TestNode, (node) => node.dataDir)
