/** The install policy's pure rules, as tables. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import {
  decideInstall,
  type InstallDecision,
  type InstallMode,
  type RiskTier,
  riskTier,
  stillPublished,
  undeclaredReach
} from "../../../services/node/InstallPolicy.js"
import { readPackageJson } from "../../../services/node/Manifest.js"

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../examples/packages")
const manifestOf = (name: string) =>
  Either.getOrThrow(readPackageJson(JSON.parse(fs.readFileSync(path.join(examples, name, "package.json"), "utf8")))).clark

describe("decideInstall", () => {
  const rows: ReadonlyArray<readonly [RiskTier, InstallMode, "person" | "machine", InstallDecision]> = [
    ["declarative", "ask-when-reaching-out", "person", "install"],
    ["sandboxed", "ask-when-reaching-out", "person", "install"],
    ["reaches-out", "ask-when-reaching-out", "person", "ask"],
    ["native", "ask-when-reaching-out", "person", "ask"],
    ["declarative", "always-ask", "person", "ask"],
    ["declarative", "ask-when-reaching-out", "machine", "ask"],
    ["sandboxed", "always-ask", "machine", "ask"],
    ["declarative", "off", "person", "refuse"],
    ["native", "off", "machine", "refuse"]
  ]
  it.each(rows)("%s under %s from the %s: %s", (tier, mode, asker, decision) => {
    expect(decideInstall(tier, mode, asker)).toBe(decision)
  })
})

describe("riskTier of the examples", () => {
  it.each([
    ["harbour-theme", "declarative"],
    ["notes-service", "reaches-out"],
    ["tide-widget", "reaches-out"]
  ] as const)("%s is %s", (name, tier) => {
    expect(riskTier(manifestOf(name))).toBe(tier)
  })

  it("a sandboxed service without outside reach, and native code whatever it declares", () => {
    const service = manifestOf("notes-service")
    expect(riskTier({ ...service, permissions: [] })).toBe("sandboxed")
    expect(riskTier({ ...service, facets: [{ ...service.facets[0]!, isolation: "trusted-native" }] })).toBe("native")
  })
})

describe("undeclaredReach", () => {
  const net = { kind: "network", value: "tides.example.org", access: null } as const
  const files = { kind: "filesystem", value: "read:~/Documents", access: "read" } as const
  const capability = { kind: "capability", value: "assistant.context", access: "read" } as const
  it.each([
    ["the same reach", [net], [net], []],
    ["a listing showing more", [net, files], [net], []],
    ["a host the listing did not show", [], [net], [net]],
    ["another access to the same folder", [{ ...files, access: "write" }], [files], [files]],
    ["a capability is not reach", [], [capability], []]
  ] as const)("%s", (_, listed, declared, extra) => {
    expect(undeclaredReach(listed, declared)).toEqual(extra)
  })
})

describe("stillPublished", () => {
  const local = { version: "1.0.0", source: "local" as const, digest: "sha256:a", contentDigest: "sha256:a" }
  const market = { version: "1.0.0", source: "marketplace" as const, digest: "sha512-x", contentDigest: "sha256:c" }
  it.each([
    ["a folder with the same version and bytes", local, { version: "1.0.0", source: "local", digest: "sha256:a", contentDigest: "sha256:a" }, true],
    ["a folder whose bytes changed", local, { version: "1.0.0", source: "local", digest: "sha256:b", contentDigest: "sha256:b" }, false],
    ["a folder now holding another version", local, { version: "1.0.1", source: "local", digest: "sha256:a", contentDigest: "sha256:a" }, false],
    ["a listing gone", local, undefined, false],
    ["a marketplace listing of the same integrity", market, { version: "1.0.0", source: "marketplace", digest: "sha512-x", contentDigest: null }, true],
    ["a marketplace listing of other bytes", market, { version: "1.0.0", source: "marketplace", digest: "sha512-y", contentDigest: null }, false],
    ["a marketplace listing of another version", market, { version: "1.1.0", source: "marketplace", digest: "sha512-x", contentDigest: null }, false]
  ] as const)("%s", (_, approval, listing, expected) => {
    expect(stillPublished(approval, listing)).toBe(expected)
  })
})
