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
