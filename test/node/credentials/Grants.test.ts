/**
 * A package's credentials reach its own service only: credentials stored through the real node's HTTP route
 * for two packages, then read by PackageCredentials over the same data dir (the broker's file, the install
 * records) as the service runtime's `grants`, and seen in the environment of real service processes (the
 * probe service's env_names tool), each with its own values and none of the other's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FileSecretBroker from "../../../layers/node/fs/SecretBroker.js"
import * as PackageCredentialsLive from "../../../layers/node/packages/PackageCredentials.js"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import * as SqlPackageRecords from "../../../layers/node/sql/SqlPackageRecords.js"
import { PackageCredentials } from "../../../services/node/PackageCredentials.js"
import { ServiceRuntime, type ServicePackage } from "../../../services/node/ServiceRuntime.js"
import { layer as runtimeLayer, probe } from "../services/fixtures/Services.js"
import { call, dataDir, expectNoLeak, install, packageFolder, withNode } from "./Fixtures.js"

const probeId = "@clark-tests/probe-service"
const otherId = "@clark-tests/other-service"
const values = {
  probeToken: "probe-token-LEAK-1a2b3c",
  probeRegion: "probe-region-LEAK-4d5e",
  otherToken: "other-token-LEAK-6f7a8b"
}

/** PackageCredentials as the node builds it, over the node's own data dir. */
const credentialsOver = (dir: string) =>
  PackageCredentialsLive.layer.pipe(
    Layer.provide(Layer.merge(FileSecretBroker.layer(dir), SqlPackageRecords.layer.pipe(Layer.provide(NodeDatabase.layer(dir)))))
  )

const plain = (grants: Record<string, Redacted.Redacted<string>>) =>
  Object.fromEntries(Object.entries(grants).map(([name, value]) => [name, Redacted.value(value)]))

const envOf = (pkg: ServicePackage) =>
  Effect.flatMap(ServiceRuntime, (runtime) =>
    Effect.map(runtime.call(pkg, { tool: "env_names", input: {} }), (result) =>
      (result.structuredContent as { env: Record<string, string> }).env))

describe("grants", () => {
  it.scoped("give each package its own credentials only, in the service's environment as CREDENTIAL_<NAME>", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      // Declarative copies under the probe's ids: the node installs them at once; the processes run the probe.
      expect(yield* install(packageFolder(probeId))).toBe(probeId)
      expect(yield* install(packageFolder(otherId))).toBe(otherId)
      for (
        const [packageId, name, value] of [
          [probeId, "token", values.probeToken],
          [probeId, "Region", values.probeRegion],
          [otherId, "token", values.otherToken]
        ] as const
      ) {
        expect((yield* call("POST", "/credentials", { body: { packageId, name, value } })).status).toBe(200)
      }

      const grants = yield* Effect.provide(
        Effect.gen(function*() {
          const credentials = yield* PackageCredentials
          return {
            probe: plain(yield* credentials.grants(probeId)),
            other: plain(yield* credentials.grants(otherId)),
            stranger: plain(yield* credentials.grants("@clark-tests/probe")),
            runtime: yield* PackageCredentialsLive.runtimeGrants
          }
        }),
        credentialsOver(dir)
      )
      expect(grants.probe).toEqual({ CREDENTIAL_TOKEN: values.probeToken, CREDENTIAL_REGION: values.probeRegion })
      expect(grants.other).toEqual({ CREDENTIAL_TOKEN: values.otherToken })
      expect(grants.stranger).toEqual({})

      // Real processes: each sees its own values and nothing of the other's.
      const { otherEnv, probeEnv } = yield* Effect.provide(
        Effect.gen(function*() {
          const probeEnv = yield* envOf(probe())
          const otherEnv = yield* envOf({ ...probe(), packageId: otherId })
          return { probeEnv, otherEnv }
        }),
        runtimeLayer({ grants: grants.runtime })
      )
      expect(probeEnv.CREDENTIAL_TOKEN).toBe(values.probeToken)
      expect(probeEnv.CREDENTIAL_REGION).toBe(values.probeRegion)
      expect(otherEnv.CREDENTIAL_TOKEN).toBe(values.otherToken)
      expect(otherEnv.CREDENTIAL_REGION).toBeUndefined()
      expect(Object.values(otherEnv)).not.toContain(values.probeToken)
      expect(Object.values(otherEnv)).not.toContain(values.probeRegion)
      expect(Object.values(probeEnv)).not.toContain(values.otherToken)
      expect(Object.keys(probeEnv).filter((name) => name.startsWith("CREDENTIAL_")).sort()).toEqual([
        "CREDENTIAL_REGION",
        "CREDENTIAL_TOKEN"
      ])
      expectNoLeak(expect, ...Object.values(values))
    })))

  it.scoped("a broker that cannot be read fails the service's start instead of running it without its credentials", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      yield* install(packageFolder(probeId))
      expect((yield* call("POST", "/credentials", { body: { packageId: probeId, name: "token", value: values.probeToken } })).status)
        .toBe(200)
      fs.chmodSync(path.join(dir, "secrets.json"), 0o644)
      const grants = yield* Effect.provide(PackageCredentialsLive.runtimeGrants, credentialsOver(dir))
      const exit = yield* Effect.exit(grants(probe()))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect(JSON.stringify(exit)).not.toContain(values.probeToken)
      const refused = yield* Effect.flip(Effect.provide(
        Effect.flatMap(ServiceRuntime, (runtime) => runtime.call(probe(), { tool: "env_names", input: {} })),
        runtimeLayer({ grants })
      ))
      expect(refused).toMatchObject({ _tag: "ServiceUnreachable", reason: "start-failed" })
    })))
})
