/**
 * A service's environment is built from nothing: the node's token, app secret, model and provider keys and
 * anything else in its own environment never reach a service; a package's grants reach that package only.
 * Checked on the real child process (the probe's env_names tool), with fake secrets in this process's env.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Redacted } from "effect"
import * as fs from "node:fs"
import { SettingsConfig } from "../../../layers/node/services/McpServiceRuntime.js"
import { dataFolderOf, fallbackPath, forSpawn, serviceEnv } from "../../../layers/node/services/ServiceEnv.js"
import { ServiceRuntime, type ServicePackage } from "../../../services/node/ServiceRuntime.js"
import { layer, probe, probeFolder, tempDir } from "./fixtures/Services.js"

/** Fake secrets, as the node's own environment would hold them. */
const secrets: Record<string, string> = {
  CC_ANTHROPIC_API_KEY: "sk-test-secret",
  CC_OPENAI_API_KEY: "sk-openai-test-secret",
  CC_MODEL_API_KEY: "model-key-test-secret",
  CC_APP_SECRET: "app-secret-test-value",
  CC_LOCAL_TOKEN: "local-token-test-value",
  CC_MAP_TILES_KEY: "map-key-test-value",
  CLARK_MARKETPLACE_TOKEN: "cmk_test_token_value",
  NODE_OPTIONS: "--require=/tmp/not-a-real-hook.js",
  AWS_SECRET_ACCESS_KEY: "aws-test-secret",
  USER: "someone-test-user",
  LOGNAME: "someone-test-logname",
  SHELL: "/bin/test-shell",
  TERM: "test-term"
}

/** Sets the fake secrets for the test's duration and restores what was there. */
const withSecrets = Effect.acquireRelease(
  Effect.sync(() => {
    const before = Object.fromEntries(Object.keys(secrets).map((name) => [name, process.env[name]]))
    Object.assign(process.env, secrets)
    return before
  }),
  (before) =>
    Effect.sync(() => {
      for (const [name, value] of Object.entries(before)) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    })
)

interface EnvAnswer {
  readonly names: Array<string>
  readonly cwd: string
  readonly env: Record<string, string>
}

const envOf = (pkg: ServicePackage) =>
  Effect.flatMap(ServiceRuntime, (runtime) =>
    Effect.map(runtime.call(pkg, { tool: "env_names", input: {} }), (result) => ({
      answer: result.structuredContent as unknown as EnvAnswer,
      wire: JSON.stringify(result)
    })))

const own = ["CLARK_PACKAGE_DATA_DIR", "CLARK_PACKAGE_ID", "HOME", "LANG", "PATH", "TMPDIR"]

describe("service environment", () => {
  it.scoped("holds no name and no value of the node's environment beyond PATH and LANG; grants reach only their package", () => {
    const dataDir = tempDir("clark-services-")
    const other: ServicePackage = { ...probe(), packageId: "@clark-tests/other-service" }
    const grants = (pkg: ServicePackage) =>
      Effect.succeed(
        pkg.packageId === probe().packageId
          ? {
            PROBE_API_TOKEN: Redacted.make("probe-credential-test-value"),
            NODE_OPTIONS: Redacted.make("--require=/tmp/evil.js"),
            CC_LEAK: Redacted.make("leak-test-value"),
            "lower-case": Redacted.make("odd-name-test-value")
          }
          : {}
      )
    return Effect.gen(function*() {
      yield* withSecrets
      const { answer, wire } = yield* envOf(probe())
      expect(answer.names).toEqual([...own, "PROBE_API_TOKEN"].sort())
      expect(answer.env.PROBE_API_TOKEN).toBe("probe-credential-test-value")
      expect(answer.env.HOME).toBe(dataFolderOf(dataDir, probe().packageId))
      expect(answer.env.CLARK_PACKAGE_DATA_DIR).toBe(answer.env.HOME)
      expect(answer.env.CLARK_PACKAGE_ID).toBe(probe().packageId)
      expect(answer.env.PATH).toBe(process.env.PATH ?? fallbackPath)
      expect(fs.realpathSync(answer.cwd)).toBe(fs.realpathSync(probeFolder))
      for (const [name, value] of Object.entries(secrets)) {
        expect(answer.names).not.toContain(name)
        expect(wire).not.toContain(value)
      }
      for (const refused of ["evil.js", "leak-test-value", "odd-name-test-value"]) expect(wire).not.toContain(refused)

      // Another package's service never sees this one's grant.
      const second = yield* envOf(other)
      expect(second.answer.names).toEqual(own)
      expect(second.wire).not.toContain("probe-credential-test-value")
      expect(second.answer.env.HOME).toBe(dataFolderOf(dataDir, other.packageId))
    }).pipe(Effect.provide(layer({ dataDir, grants })))
  })
})

describe("serviceEnv", () => {
  it("builds the variables from its input only and refuses grant names that would steer the process", () => {
    const built = serviceEnv({
      packageId: "@acme/tool",
      dataFolder: "/data/services/%40acme%2Ftool",
      inheritedPath: undefined,
      inheritedLang: "en_GB.UTF-8; rm -rf /",
      grants: { ACME_TOKEN: "t", PATH: "/evil", NODE_OPTIONS: "x", LD_PRELOAD: "x", BASH_ENV: "x", "a b": "x", CLARK_PACKAGE_ID: "x" }
    })
    expect(built.env).toEqual({
      ACME_TOKEN: "t",
      PATH: fallbackPath,
      HOME: "/data/services/%40acme%2Ftool",
      TMPDIR: "/data/services/%40acme%2Ftool/.tmp",
      LANG: "C.UTF-8",
      CLARK_PACKAGE_ID: "@acme/tool",
      CLARK_PACKAGE_DATA_DIR: "/data/services/%40acme%2Ftool"
    })
    expect([...built.refused].sort()).toEqual(["BASH_ENV", "CLARK_PACKAGE_ID", "LD_PRELOAD", "NODE_OPTIONS", "PATH", "a b"])
  })

  it("blanks the names the SDK's transport would otherwise copy from the node", () => {
    const spawned = forSpawn({ PATH: "/bin", HOME: "/h" })
    expect(spawned).toMatchObject({ PATH: "/bin", HOME: "/h" })
    for (const name of ["LOGNAME", "SHELL", "TERM", "USER"]) {
      expect(name in spawned).toBe(true)
      expect(spawned[name]).toBeUndefined()
    }
  })

  it("gives each package one folder of its own, scoped names included", () => {
    expect(dataFolderOf("/d", "@acme/tool")).toBe("/d/%40acme%2Ftool")
    expect(dataFolderOf("/d", "plain")).toBe("/d/plain")
  })
})

describe("service settings", () => {
  it.effect("read durations from the environment, with the defaults when unset", () =>
    Effect.gen(function*() {
      const unset = yield* SettingsConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
      expect(Duration.toMillis(unset.callTimeout)).toBe(30_000)
      expect(Duration.toMillis(unset.killAfter)).toBe(2_000)
      expect(Duration.toMillis(unset.idleAfter)).toBe(300_000)
      expect(Duration.toMillis(unset.connectTimeout)).toBe(10_000)
      const set = yield* SettingsConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([
        ["CC_SERVICE_CALL_TIMEOUT", "90 seconds"],
        ["CC_SERVICE_IDLE_AFTER", "1 minute"]
      ]))))
      expect(Duration.toMillis(set.callTimeout)).toBe(90_000)
      expect(Duration.toMillis(set.idleAfter)).toBe(60_000)
    }))
})
