/** The rules of machine-surface widget file writes as tables (services/node/FileWriteRules.ts). */
import { describe, expect, it } from "@effect/vitest"
import type { RiskClass } from "../../../schema/node/Manifest.js"
import type { DenyRule, MachineTurns } from "../../../schema/node/Preferences.js"
import type { Caller, Surface } from "../../../schema/node/Security.js"
import type { Verdict } from "../../../services/node/ExecutionPolicy.js"
import {
  askerOf,
  type CardInput,
  cardDigest,
  type FileOperation,
  isCard,
  riskOf,
  rightCovers,
  verdictOf
} from "../../../services/node/FileWriteRules.js"

const caller = (surface: Surface, connection?: string): Caller => ({ surface, channel: "text", connection })

describe("askerOf", () => {
  it.each([
    ["the relay: the connection", caller("relay", "ws-1"), "relay:ws-1"],
    ["another relay connection is another asker", caller("relay", "ws-2"), "relay:ws-2"],
    ["mcp: any client of the surface", caller("mcp", "m-1"), "mcp"],
    ["cli-api: any client of the surface", caller("cli-api"), "cli-api"],
    ["the person", caller("person"), "person"]
  ] as const)("%s", (_, given, asker) => expect(askerOf(given)).toBe(asker))
})

describe("riskOf", () => {
  const unfinished = (startedBy: string | null) => ({ state: "unfinished" as const, startedBy })
  it.each<readonly [string, FileOperation, Parameters<typeof riskOf>[1], RiskClass]>([
    ["a create is a local write", "create", null, "local-write"],
    ["chunks and finalize are local writes", "write", unfinished("cli-api"), "local-write"],
    ["an attach is a local write", "attach", { state: "finalized", startedBy: "cli-api" }, "local-write"],
    ["discarding the asker's own unfinished file is a local write", "discard", unfinished("cli-api"), "local-write"],
    ["discarding a finalized file is destructive", "discard", { state: "finalized", startedBy: "cli-api" }, "destructive"],
    ["discarding a file another asker started is destructive", "discard", unfinished("mcp"), "destructive"],
    ["discarding a file the app started is destructive", "discard", unfinished(null), "destructive"],
    ["discarding a file not known here is destructive", "discard", null, "destructive"]
  ])("%s", (_, operation, file, risk) => expect(riskOf(operation, file, "cli-api")).toBe(risk))
})

describe("verdictOf", () => {
  const run: Verdict = { _tag: "Run" }
  const ask: Verdict = { _tag: "Ask" }
  const step = (origin: Surface, risk: RiskClass = "local-write", operation: FileOperation = "create") => ({
    origin,
    packageId: "@clark/notes",
    operation,
    risk
  })
  it.each<readonly [string, ReturnType<typeof step>, MachineTurns, ReadonlyArray<DenyRule>, boolean, Verdict]>([
    ["default: a machine write runs", step("cli-api"), "default", [], false, run],
    ["default: a destructive discard runs", step("mcp", "destructive", "discard"), "default", [], false, run],
    ["ask: a local write from cli-api asks", step("cli-api"), "ask", [], false, ask],
    ["ask: mcp asks", step("mcp"), "ask", [], false, ask],
    ["ask: the relay asks", step("relay", "destructive", "discard"), "ask", [], false, ask],
    ["ask: automation is not an asking origin", step("automation"), "ask", [], false, run],
    ["ask: a grant or a write right runs it", step("cli-api"), "ask", [], true, run],
    ["a deny rule on the package refuses", step("cli-api"), "default", [{ package: "@clark/notes" }], false, { _tag: "Deny", rule: 0 }],
    ["a deny rule wins over a grant", step("mcp"), "ask", [{ tool: "artifacts.create" }], true, { _tag: "Deny", rule: 0 }],
    ["a deny rule by risk leaves local writes", step("cli-api"), "default", [{ risk: "destructive" }], false, run],
    [
      "a deny rule by risk refuses a destructive discard",
      step("cli-api", "destructive", "discard"),
      "default",
      [{ risk: "destructive" }],
      false,
      { _tag: "Deny", rule: 0 }
    ]
  ])("%s", (_, given, machineTurns, denyRules, granted, verdict) =>
    expect(verdictOf(given, { machineTurns, denyRules, granted })).toEqual(verdict))
})

describe("rightCovers", () => {
  const right = { asker: "relay:ws-1", until: 900_000 }
  it.each<readonly [string, typeof right | undefined, string, number, FileOperation, RiskClass, boolean]>([
    ["chunks and finalize of its holder", right, "relay:ws-1", 0, "write", "local-write", true],
    ["not another connection", right, "relay:ws-2", 0, "write", "local-write", false],
    ["not at its end", right, "relay:ws-1", 900_000, "write", "local-write", false],
    ["a discard of the holder's own unfinished file", right, "relay:ws-1", 0, "discard", "local-write", true],
    ["not a destructive discard", right, "relay:ws-1", 0, "discard", "destructive", false],
    ["not an attach (its own card)", right, "relay:ws-1", 0, "attach", "local-write", false],
    ["no right, nothing covered", undefined, "relay:ws-1", 0, "write", "local-write", false]
  ])("%s", (_, held, asker, now, operation, risk, covered) =>
    expect(rightCovers(held, asker, now, operation, risk)).toBe(covered))
})

describe("cards", () => {
  const card: CardInput = {
    kind: "widget-file-write",
    version: 1,
    operation: "write",
    instanceId: "wi_1",
    artifactId: "art_1",
    mimeType: null,
    name: null,
    asker: "cli-api"
  }
  it("one digest per file, asker and conversation", () => {
    expect(cardDigest("c_1", card)).toBe(cardDigest("c_1", { ...card }))
    expect(cardDigest("c_1", card)).not.toBe(cardDigest("c_2", card))
    expect(cardDigest("c_1", card)).not.toBe(cardDigest("c_1", { ...card, asker: "mcp" }))
    expect(cardDigest("c_1", card)).not.toBe(cardDigest("c_1", { ...card, artifactId: "art_2" }))
  })
  it("a card is told by its input, not only by its tool name", () => {
    expect(isCard({ tool: "artifacts.write", input: card })).toBe(true)
    expect(isCard({ tool: "artifacts.write", input: { path: "x" } })).toBe(false)
    expect(isCard({ tool: "save_note", input: card })).toBe(false)
  })
})
