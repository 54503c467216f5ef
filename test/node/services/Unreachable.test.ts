/**
 * Services that cannot be started or spoken to are ServiceUnreachable, and leave no process behind: no
 * service facet, an entry that does not run, an entry that never answers the MCP handshake.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { dataFolderOf } from "../../../layers/node/services/ServiceEnv.js"
import { ServiceRuntime, type ServicePackage } from "../../../services/node/ServiceRuntime.js"
import { armed, eventually, gone, layer, probe, tempDir } from "./fixtures/Services.js"

/** The probe with its service facet's entry replaced. */
const withEntry = (entry: string): ServicePackage => {
  const pkg = probe()
  return {
    ...pkg,
    manifest: {
      ...pkg.manifest,
      facets: pkg.manifest.facets.map((facet) => (facet.kind === "service" ? { ...facet, entry } : facet))
    }
  }
}

describe("unreachable services", () => {
  it.scoped("a package without a service facet", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const pkg = probe()
      const toolOnly = { ...pkg, manifest: { ...pkg.manifest, facets: pkg.manifest.facets.filter((f) => f.kind !== "service") } }
      const error = yield* Effect.flip(runtime.call(toolOnly, { tool: "read_value", input: { key: "a" } }))
      expect({ ...error }).toEqual({ _tag: "ServiceUnreachable", packageId: pkg.packageId, reason: "no-service-facet" })
      expect(yield* runtime.running).toEqual([])
    }).pipe(Effect.provide(layer())))

  it.scoped("an entry that does not run (missing file): the process exits before the handshake; a later call tries again", () =>
    Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const error = yield* Effect.flip(runtime.call(withEntry("missing.mjs"), { tool: "read_value", input: { key: "a" } }))
      expect({ ...error }).toEqual({ _tag: "ServiceUnreachable", packageId: probe().packageId, reason: "exited" })
      expect(yield* runtime.running).toEqual([])
      const answer = yield* runtime.call(probe(), { tool: "read_value", input: { key: "a" } })
      expect(answer.isError).toBe(false)
    }).pipe(Effect.provide(layer())))

  it.scoped("an entry that never answers the handshake times out (on the clock) and is killed", () => {
    const dataDir = tempDir("clark-services-")
    return Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const pkg = withEntry("silent.mjs")
      const fiber = yield* Effect.fork(runtime.tools(pkg))
      const pidFile = path.join(dataFolderOf(dataDir, pkg.packageId), "silent.pid")
      const pid = yield* eventually("the silent entry started", Effect.sync(() => {
        const text = fs.existsSync(pidFile) ? fs.readFileSync(pidFile, "utf8") : ""
        return text === "" ? undefined : Number(text)
      }))
      yield* armed(10_000)
      yield* TestClock.adjust("10 seconds")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect({ ...error }).toEqual({ _tag: "ServiceUnreachable", packageId: pkg.packageId, reason: "handshake-timeout" })
      yield* gone(pid)
      expect(yield* runtime.running).toEqual([])
    }).pipe(Effect.provide(layer({ dataDir })))
  })
})
