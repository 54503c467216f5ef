/**
 * `clark --help` and every command's help page, read as a user reads them:
 * the compiled `clark` run as a process for each page. Every command has a
 * one-line description in the listing, usage lines start with `clark` and the
 * whole path, no path is repeated, and none of @effect/cli's boilerplate is
 * left (type notes, "This setting is optional.", built-in options, colours).
 */
import { describe, expect, it } from "@effect/vitest"
import { type Outcome, runClark } from "../support/Cli.js"

const timeout = 60_000
const help = (path: ReadonlyArray<string>, flag = "--help") =>
  runClark([...path, flag], { env: { ...process.env, COLUMNS: "100" }, timeout })

/** The rows of a section (`Commands:`, `Arguments:`, `Options:`) of a page, as printed. */
const section = (page: string, title: string): ReadonlyArray<string> => {
  const lines = page.split("\n")
  const start = lines.indexOf(`${title}:`)
  if (start < 0) return []
  const end = lines.findIndex((line, i) => i > start && line === "")
  return lines.slice(start + 1, end < 0 ? undefined : end)
}

/** `[path, summary]` per row of a Commands section: the path, two spaces or more, the summary. */
const commandRows = (page: string) =>
  section(page, "Commands").map((line) => {
    const row = /^ {2}(\S+(?: \S+)*) {2,}(\S.*)$/.exec(line)
    return row === null ? [line.trim(), ""] as const : [row[1]!, row[2]!] as const
  })

const boilerplate = [
  "This setting is optional",
  "A true or false value",
  "A user-defined piece of text",
  "One of the following",
  "An integer",
  "--wizard",
  "--completions",
  "--log-level",
  "$ "
]

/** The rules every page keeps. */
const expectReadable = (path: ReadonlyArray<string>, outcome: Outcome) => {
  const where = `clark ${path.join(" ")} --help`
  expect(outcome.code, where).toBe(0)
  expect(outcome.stderr, where).toBe("")
  const page = outcome.stdout
  // No colour codes: the page reads the same in a file, a pipe or a terminal.
  expect(page.includes("\u001b["), where).toBe(false)
  const usages = page.split("\n").filter((line) => line.startsWith("Usage:"))
  expect(usages.length, where).toBeGreaterThan(0)
  for (const usage of usages) expect(usage, where).toMatch(new RegExp(`^Usage: ${["clark", ...path].join(" ")}( |$)`))
  for (const text of boilerplate) expect(page, `${where}: ${text}`).not.toContain(text)
  // A path never repeats a command name (`marketplace marketplace admin`).
  for (const line of page.split("\n")) expect(line, where).not.toMatch(/\b([a-z][a-z-]+) \1\b/)
  for (const [name, summary] of commandRows(page)) {
    expect(summary, `${where}: ${name} has a description`).not.toBe("")
    expect(`  ${name}  ${summary}`.length, `${where}: ${name} fits one line`).toBeLessThanOrEqual(100)
  }
  const names = commandRows(page).map(([name]) => name)
  expect(new Set(names).size, where).toBe(names.length)
  // Each option and argument has its description, on its line or the next.
  for (const title of ["Options", "Arguments"]) {
    const rows = section(page, title)
    rows.forEach((line, i) => {
      if (!/^ {2}\S/.test(line)) return
      const described = /^ {2}\S+(?: \S+)*? {2,}\S/.test(line) || /^ {4,}\S/.test(rows[i + 1] ?? "")
      expect(described, `${where}: ${line.trim()}`).toBe(true)
    })
  }
  return page
}

describe("clark --help", () => {
  it("lists every command once, one line each with a description, and the market commands for every operation", async () => {
    const page = expectReadable([], await help([]))
    expect(page.split("\n")[0]).toBe("Usage: clark <command> [options]")
    const listed = commandRows(page).map(([name]) => name)
    expect(listed).toEqual(expect.arrayContaining([
      "marketplace serve",
      "marketplace admin user create",
      "node serve",
      "node conversations list",
      ...[
        "health",
        "search",
        "show",
        "versions",
        "install",
        "categories",
        "collections",
        "page",
        "me",
        "me packages",
        "me delete",
        "curate status",
        "curate feature",
        "collection show",
        "collection create",
        "collection update",
        "collection add",
        "collection remove",
        "collection reorder",
        "submit",
        "publisher create",
        "publisher show",
        "publisher update",
        "publisher members add",
        "publisher members remove",
        "publisher verify",
        "publisher claim",
        "devices list",
        "devices revoke",
        "grants list",
        "grants revoke",
        "admin suspend",
        "admin unsuspend",
        "audit"
      ].map((command) => `market ${command}`)
    ]))
    expect(section(page, "Options")).toEqual([
      expect.stringMatching(/^ {2}-h, --help +show this help$/),
      expect.stringMatching(/^ {2}--version +print the version$/)
    ])
  }, timeout)

  it("every command's page keeps the same rules, and -h is --help", async () => {
    const top = (await help([])).stdout
    const commands = commandRows(top).map(([name]) => name.split(" "))
    // The groups along the way have pages too (`clark marketplace admin --help`).
    const paths = [...new Map([...commands, ...commands.flatMap((path) => path.slice(0, -1).map((_, i) => path.slice(0, i + 1)))]
      .map((path) => [path.join(" "), path] as const)).values()]
    expect(paths.length).toBeGreaterThan(40)
    // A few at a time: each is a process of its own.
    for (let i = 0; i < paths.length; i += 6) {
      const batch = paths.slice(i, i + 6)
      const outcomes = await Promise.all(batch.map((path) => help(path)))
      batch.forEach((path, j) => expectReadable(path, outcomes[j]!))
    }
    const [short, long] = await Promise.all([help(["market", "curate", "status"], "-h"), help(["market", "curate", "status"])])
    expect(short.stdout).toBe(long.stdout)
  }, 300_000)

  it("a leaf's page: usage with its arguments, its description, its arguments and options", async () => {
    const page = expectReadable(["market", "curate", "status"], await help(["market", "curate", "status"]))
    expect(page.split("\n").slice(0, 3)).toEqual([
      "Usage: clark market curate status [options] NAME STATUS",
      "",
      "Set a package's curation status"
    ])
    expect(section(page, "Arguments")).toEqual([
      expect.stringMatching(/^ {2}NAME +registry package name; scoped names look like @scope\/name$/),
      expect.stringMatching(/^ {2}STATUS +one of unreviewed, listed, featured, hidden, rejected$/)
    ])
    expect(section(page, "Options").map((line) => line.trim().split(/ {2,}/)[0])).toEqual(
      expect.arrayContaining(["--url TEXT", "--token SECRET", "--json", "--idempotency-key TEXT", "--reason TEXT", "-h, --help"])
    )
  }, timeout)

  it("a group alone shows its page; a name that is none of its commands is refused in one line", async () => {
    const [alone, unknown] = await Promise.all([
      runClark(["market"], { env: process.env, timeout }),
      runClark(["market", "nope"], { env: process.env, timeout })
    ])
    expect(alone.stdout).toBe((await help(["market"])).stdout)
    expect(alone.code).toBe(0)
    expect(unknown.code).toBe(1)
    expect(unknown.stdout).toBe("")
    expect(unknown.stderr).toBe('unknown_command: clark market has no command nope; run "clark market --help" for the list\n')
  }, timeout)
})
