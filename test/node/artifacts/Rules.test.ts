/** The pure rules of widget files (services/node/ArtifactRules.ts), table by table. */
import { describe, expect, it } from "@effect/vitest"
import {
  accepts,
  grantHolds,
  grantMillis,
  maxNameLength,
  removalAt,
  sanitizeName,
  sniff
} from "../../../services/node/ArtifactRules.js"

describe("sanitizeName", () => {
  const rows: ReadonlyArray<readonly [string | undefined, string, string]> = [
    ["photo.png", "image/png", "photo.png"],
    ["Photo.PNG", "image/png", "Photo.png"],
    ["holiday.jpeg", "image/jpeg", "holiday.jpeg"],
    ["holiday", "image/jpeg", "holiday.jpg"],
    ["report.exe", "image/png", "report.exe.png"],
    ["../../etc/passwd", "text/plain", "passwd.txt"],
    ["C:\\Users\\me\\secret.txt", "text/plain", "secret.txt"],
    ["a/b/", "image/png", "untitled.png"],
    [undefined, "image/png", "untitled.png"],
    ["", "application/pdf", "untitled.pdf"],
    ["   ...  ", "image/png", "untitled.png"],
    [".bashrc", "text/plain", "bashrc.txt"],
    ["inv\u200Bisi\u202Eble\u0000.png", "image/png", "invisible.png"],
    ["we<i>rd:na|me?*\".csv", "text/csv", "weirdname.csv"],
    ["tab\tand\nnewline.txt", "text/plain", "tabandnewline.txt"],
    ["CON", "text/plain", "CON_.txt"],
    ["notes.tar.gz", "application/x-custom", "notes.tar.gz"],
    ["résumé.pdf", "application/pdf", "résumé.pdf"],
    ["tag\u{E0041}s.png", "image/png", "tags.png"]
  ]
  it.each(rows)("%j as %s → %s", (raw, type, expected) => {
    expect(sanitizeName(raw, type)).toBe(expected)
  })

  it("cuts long names keeping the type's extension, without splitting a character", () => {
    const name = sanitizeName(`${"😀".repeat(300)}.png`, "image/png")
    expect(name.endsWith(".png")).toBe(true)
    expect(Array.from(name).length).toBeLessThanOrEqual(maxNameLength)
    expect(name.includes("\uFFFD")).toBe(false)
    expect(/^(?:😀)+\.png$/u.test(name)).toBe(true)
  })

  it("never answers a path", () => {
    for (const raw of ["/", "..", "../", "a/../../b", "\\\\server\\share\\x", "./."]) {
      const name = sanitizeName(raw, "image/png")
      expect(name).not.toMatch(/[/\\]/)
      expect(name.startsWith(".")).toBe(false)
    }
  })
})

describe("sniff", () => {
  const knows = (type: string) => ["image/png", "image/jpeg", "application/pdf", "audio/mpeg"].includes(type)
  const rows: ReadonlyArray<readonly [string, string | undefined, boolean, "Agrees" | "Disagrees"]> = [
    ["image/png", "image/png", false, "Agrees"],
    ["image/png; q=1", "image/png", false, "Agrees"],
    ["image/png", "image/jpeg", false, "Disagrees"],
    ["image/png", undefined, true, "Disagrees"],
    ["image/png", undefined, false, "Disagrees"],
    ["text/plain", undefined, true, "Agrees"],
    ["text/plain", undefined, false, "Disagrees"],
    ["text/plain", "application/pdf", false, "Disagrees"],
    ["application/json", undefined, true, "Agrees"],
    ["image/svg+xml", "application/xml", true, "Agrees"],
    ["application/octet-stream", "image/png", false, "Agrees"],
    ["application/x-custom", undefined, false, "Agrees"],
    ["application/x-custom", "image/png", false, "Disagrees"],
    ["audio/wav", "audio/x-wav", false, "Agrees"]
  ]
  it.each(rows)("declared %s, detected %s, utf8 %s → %s", (declared, detected, utf8, verdict) => {
    expect(sniff(declared, detected, utf8, knows)._tag).toBe(verdict)
  })
})

describe("accepts", () => {
  const rows: ReadonlyArray<readonly [ReadonlyArray<string> | undefined, string, string, boolean]> = [
    [undefined, "a.png", "image/png", true],
    [[], "a.png", "image/png", true],
    [["image/*"], "a.png", "image/png", true],
    [["image/*"], "a.pdf", "application/pdf", false],
    [[".png", ".jpg"], "A.PNG", "image/png", true],
    [[".png"], "a.jpg", "image/jpeg", false],
    [["application/pdf"], "x", "application/pdf; charset=binary", true],
    [["text/csv", ".tsv"], "t.tsv", "text/tab-separated-values", true]
  ]
  it.each(rows)("accept %j, %s %s → %s", (list, name, type, expected) => {
    expect(accepts(list, name, type)).toBe(expected)
  })
})

describe("grants", () => {
  const at = "2030-01-01T00:00:00.000Z"
  const start = Date.parse(at)
  it.each([
    [0, true],
    [grantMillis - 1, true],
    [grantMillis, false],
    [grantMillis + 1, false]
  ])("%i ms after the last write: holds %s", (after, holds) => {
    expect(grantHolds(at, start + after)).toBe(holds)
  })

  it("removes an unfinished file 24 hours after its last write", () => {
    expect(removalAt(at) - start).toBe(24 * 60 * 60 * 1000)
  })
})
