/**
 * The execution policy as a table (origin × risk × execution mode × deny rule × grant), and the model-facing
 * names of package tools.
 */
import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import type { RiskClass } from "../../../schema/node/Manifest.js"
import type { DenyRule, MachineTurns } from "../../../schema/node/Preferences.js"
import type { Surface } from "../../../schema/node/Security.js"
import { decide, type Verdict } from "../../../services/node/ExecutionPolicy.js"
import { toolNames } from "../../../services/node/PackageTools.js"

const run: Verdict = { _tag: "Run" }
const ask: Verdict = { _tag: "Ask" }
const deny = (rule: number): Verdict => ({ _tag: "Deny", rule })

const step = (origin: Surface, risk: RiskClass, tool = "send", packageId = "@acme/mail") => ({ origin, risk, tool, packageId })

const cases: ReadonlyArray<
  readonly [string, ReturnType<typeof step>, MachineTurns, ReadonlyArray<DenyRule>, boolean, Verdict]
> = [
  ["by default every origin is treated like the person", step("cli-api", "financial"), "default", [], false, run],
  ["ask: a risky step of a cli-api turn asks", step("cli-api", "external-write"), "ask", [], false, ask],
  ["ask: mcp asks too", step("mcp", "destructive"), "ask", [], false, ask],
  ["ask: the relay asks too", step("relay", "communication"), "ask", [], false, ask],
  ["ask: media capture is risky", step("cli-api", "media-capture"), "ask", [], false, ask],
  ["ask: financial is risky", step("mcp", "financial"), "ask", [], false, ask],
  ["ask: a read never asks", step("cli-api", "read"), "ask", [], false, run],
  ["ask: a local write is not risky", step("cli-api", "local-write"), "ask", [], false, run],
  ["ask: the person's own turn follows the default", step("person", "destructive"), "ask", [], false, run],
  ["ask: automation is not one of the asking origins", step("automation", "external-write"), "ask", [], false, run],
  ["ask: a peer is not one of the asking origins", step("peer", "external-write"), "ask", [], false, run],
  ["ask: a grant for exactly this operation runs it", step("cli-api", "external-write"), "ask", [], true, run],
  ["a deny rule on the package wins for the person", step("person", "read"), "default", [{ package: "@acme/mail" }], false, deny(0)],
  ["a deny rule wins over a grant", step("cli-api", "external-write"), "ask", [{ tool: "send" }], true, deny(0)],
  ["a deny rule by risk", step("person", "financial"), "default", [{ risk: "financial" }], false, deny(0)],
  ["a deny rule by risk leaves other risks", step("person", "read"), "default", [{ risk: "financial" }], false, run],
  ["a deny rule by origin applies to that origin", step("mcp", "read"), "default", [{ origins: ["mcp", "relay"] }], false, deny(0)],
  ["a deny rule by origin leaves the person", step("person", "read"), "default", [{ origins: ["mcp"] }], false, run],
  ["every field of a rule must match", step("person", "read"), "default", [{ tool: "send", risk: "financial" }], false, run],
  ["another package's rule does not apply", step("person", "read"), "default", [{ package: "@acme/other" }], false, run],
  ["the first matching rule is named", step("person", "read"), "default", [{ package: "@acme/other" }, { tool: "send" }, { risk: "read" }], false, deny(1)]
]

describe("the execution policy", () => {
  it.each(cases)("%s", (_, s, machineTurns, denyRules, granted, expected) => {
    expect(decide(s, { machineTurns, denyRules, granted })).toEqual(expected)
  })
})

const hash = (text: string) => createHash("sha256").update(text).digest("hex")

describe("package tool names", () => {
  it.each([
    ["the package name without its scope", [{ packageId: "@acme/mail", tool: "send" }], ["mail__send"]],
    ["an unscoped package as it is", [{ packageId: "notes", tool: "list" }], ["notes__list"]],
    [
      "the scope joins in when two packages share a name",
      [{ packageId: "@acme/mail", tool: "send" }, { packageId: "@other/mail", tool: "send" }],
      ["acme_mail__send", "other_mail__send"]
    ],
    ["characters a model refuses become _", [{ packageId: "@acme/mail.v2", tool: "send now" }], ["mail_v2__send_now"]]
  ] as const)("%s", (_, tools, names) => {
    expect(toolNames(tools, hash)).toEqual(names)
  })

  it("keeps a long name within 64 characters, distinct from its neighbours", () => {
    const long = "x".repeat(80)
    const names = toolNames([{ packageId: "@acme/mail", tool: `${long}a` }, { packageId: "@acme/mail", tool: `${long}b` }], hash)
    expect(names.every((name) => name.length <= 64 && /^[A-Za-z0-9_-]+$/.test(name))).toBe(true)
    expect(new Set(names).size).toBe(2)
  })
})
