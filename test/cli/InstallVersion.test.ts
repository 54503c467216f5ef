import { describe, expect, it } from "@effect/vitest"
import { foldInstallVersion } from "../../src/cli/market/InstallVersion.js"

const argv = (...args: ReadonlyArray<string>) => ["node", "main.ts", ...args]

describe("clark market install --version", () => {
  it.each([
    [["market", "install", "@acme/tool", "--version", "1.2.0"], ["market", "install", "@acme/tool@1.2.0"]],
    [["market", "install", "--version=1.2.0", "tool"], ["market", "install", "tool@1.2.0"]],
    [["market", "install", "--url", "http://x", "--version", "2.0.0", "tool", "--json"], [
      "market",
      "install",
      "--url",
      "http://x",
      "tool@2.0.0",
      "--json"
    ]]
  ])("folds %j into the package spec", (given, expected) => {
    expect(foldInstallVersion(argv(...given))).toEqual(argv(...expected))
  })

  it.each([
    [["--version"]],
    [["market", "show", "tool", "--version", "1.0.0"]],
    [["market", "install", "tool"]],
    [["market", "install", "--version", "1.0.0"]]
  ])("leaves %j alone", (given) => {
    expect(foldInstallVersion(argv(...given))).toEqual(argv(...given))
  })
})
