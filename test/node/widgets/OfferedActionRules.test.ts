/** The pure rules of offered actions: the input's size, the card's digest, the policy of a local write. */
import { describe, expect, it } from "@effect/vitest"
import type { DenyRule, MachineTurns } from "../../../schema/node/Preferences.js"
import type { Surface } from "../../../schema/node/Security.js"
import {
  inputChars,
  inputTooLong,
  offeredDigest,
  offeredVerdict,
  settledStatus,
  stepTool
} from "../../../services/node/OfferedActionRules.js"

describe("the input's size", () => {
  it.each([
    ["x".repeat(1198), 1200, false],
    ["x".repeat(1199), 1201, true],
    [undefined, 4, false],
    [{ row: 3 }, 9, false],
    ["é".repeat(1198), 1200, false]
  ] as const)("%#: %s characters of JSON", (input, chars, tooLong) => {
    expect(inputChars(input)).toBe(chars)
    expect(inputTooLong(input)).toBe(tooLong)
  })
})

describe("the card's digest", () => {
  const base = ["wid_1", "sha256:aa", "highlight", { row: 1, col: 2 }] as const
  it("is the same for the same request, whatever the order of its keys", () => {
    expect(offeredDigest(...base)).toBe(offeredDigest("wid_1", "sha256:aa", "highlight", { col: 2, row: 1 }))
    expect(offeredDigest(...base)).toMatch(/^sha256:[0-9a-f]{64}$/)
  })
  it.each([
    ["another widget", ["wid_2", "sha256:aa", "highlight", { row: 1, col: 2 }]],
    ["another package content", ["wid_1", "sha256:bb", "highlight", { row: 1, col: 2 }]],
    ["another action", ["wid_1", "sha256:aa", "select", { row: 1, col: 2 }]],
    ["another input", ["wid_1", "sha256:aa", "highlight", { row: 1, col: 3 }]]
  ] as const)("differs for %s", (_, other) => {
    expect(offeredDigest(...(other as unknown as typeof base))).not.toBe(offeredDigest(...base))
  })
})

describe("the execution policy of a local write", () => {
  const step = (origin: Surface) => ({ origin, packageId: "@acme/panel", tool: stepTool("panel", "highlight") })
  const rows: ReadonlyArray<readonly [Surface, MachineTurns, ReadonlyArray<DenyRule>, string]> = [
    ["person", "default", [], "Run"],
    ["person", "ask", [], "Run"],
    ["automation", "ask", [], "Run"],
    ["cli-api", "default", [], "Run"],
    ["cli-api", "ask", [], "Ask"],
    ["mcp", "ask", [], "Ask"],
    ["relay", "ask", [], "Ask"],
    ["person", "default", [{ risk: "local-write" }], "Deny"],
    ["person", "default", [{ package: "@acme/panel" }], "Deny"],
    ["cli-api", "ask", [{ package: "@acme/panel", tool: "panel.highlight" }], "Deny"],
    ["person", "default", [{ package: "@acme/panel", tool: "panel.select" }], "Run"],
    ["person", "default", [{ risk: "external-write" }], "Run"],
    ["person", "default", [{ origins: ["mcp"] }], "Run"],
    ["mcp", "default", [{ origins: ["mcp"] }], "Deny"]
  ]
  it.each(rows)("%s under %s with %j: %s", (origin, machineTurns, denyRules, verdict) => {
    expect(offeredVerdict(step(origin), { machineTurns, denyRules })._tag).toBe(verdict)
  })
})

describe("the widget's answer", () => {
  it.each([["done", "done"], ["refused", "refused"], ["error", "unknown"]] as const)("%s settles as %s", (outcome, status) => {
    expect(settledStatus(outcome)).toBe(status)
  })
})
