/**
 * The real `clark market` client, end to end (see MarketFixture.ts): search,
 * show and install, where the connection settings come from, and the
 * curator's commands.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { freePort } from "../support/Ports.js"
import { type Outcome } from "../support/Cli.js"
import {
  bearer,
  clark,
  expectFailure,
  expectNoSecrets,
  server,
  slow,
  tmp,
  tokens,
  useMarketplace,
  writeFile
} from "./MarketFixture.js"

useMarketplace()

describe("clark market: public reads", () => {
  it("search prints a table, and with --json the API's body", async () => {
    const [table, json, sorted] = await Promise.all([
      clark(["search", "widget", "--limit", "2"]),
      clark(["search", "--json", "widget", "--publisher", "acme"]),
      clark(["search", "--sort", "name", "--curation", "listed", "--json"])
    ])

    expect(table).toMatchObject({ code: 0, stderr: "" })
    const lines = table.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+STATUS\s+DESCRIPTION$/)
    const widgets = lines.find((line) => line.startsWith("@acme/widgets"))
    expect(widgets).toMatch(/^@acme\/widgets\s+1\.1\.0\s+featured\s+Widgets for every dashboard.*…$/)
    expect(widgets).not.toContain("keyboard support")
    expect(lines[2]).toMatch(/^(alpha|beta)-tool\s+\d\.\d\.\d\s+listed\s+(A|Another) widget helper$/)
    expect(lines.slice(3)).toEqual(["", expect.stringMatching(/^more: --cursor \S+$/)])

    expect(json).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/search?q=widget&publisher=acme")).body)
    expect(JSON.parse(json.stdout).items.map((item: { name: string }) => item.name)).toEqual(["@acme/widgets"])

    expect(sorted).toMatchObject({ code: 0, stderr: "" })
    const listed = (await server.request("/api/v1/packages?sort=name&curation=listed")).body
    expect(JSON.parse(sorted.stdout)).toEqual(listed)
    expect(listed.items.map((item: { name: string }) => item.name)).toEqual(["alpha-tool", "beta-tool"])
  }, slow)

  it("show takes a scoped name; install gives the coordinate of the latest, of --version V or of NAME@VERSION; unknown ones are not_found", async () => {
    const [shown, shownJson, latest, pinned, unknownVersion, badName] = await Promise.all([
      clark(["show", "@acme/widgets"]),
      clark(["show", "@acme/widgets", "--json"]),
      clark(["install", "@acme/widgets"]),
      clark(["install", "@acme/widgets", "--version", "1.0.0", "--json"]),
      clark(["install", "@acme/widgets@9.9.9"]),
      clark(["show", "Not A Name"])
    ])

    expect(shown).toMatchObject({ code: 0, stderr: "" })
    expect(shown.stdout).toMatch(/^@acme\/widgets 1\.1\.0 \(Acme Widgets\)\n/)
    expect(shown.stdout).toMatch(/\nstatus\s+featured\n/)
    expect(shown.stdout).toMatch(/\npublisher\s+Acme \(acme, verified\)\n/)
    expect(shown.stdout).toMatch(/\nlicense\s+MIT\n/)
    expect(shown.stdout).toMatch(/\nversions:\n\s+1\.1\.0\s+2024-01-20T00:00:00\.000Z\n\s+1\.0\.0\s+2024-01-01/)
    expect(JSON.parse(shownJson.stdout)).toEqual((await server.request("/api/v1/packages/%40acme%2Fwidgets")).body)

    const coordinate = (await server.request("/api/v1/packages/%40acme%2Fwidgets/install")).body
    expect(coordinate.version).toBe("1.1.0")
    expect(latest).toMatchObject({ code: 0, stderr: "" })
    expect(latest.stdout).toMatch(/^@acme\/widgets@1\.1\.0\n/)
    expect(latest.stdout).toContain(coordinate.cliCommand)
    expect(latest.stdout).toContain(coordinate.openInApp)
    expect(latest.stdout).toContain(coordinate.integrity)

    expect(pinned).toMatchObject({ code: 0, stderr: "" })
    const pinnedBody = (await server.request("/api/v1/packages/%40acme%2Fwidgets/install?version=1.0.0")).body
    expect(pinnedBody.version).toBe("1.0.0")
    expect(JSON.parse(pinned.stdout)).toEqual(pinnedBody)

    expectFailure(unknownVersion, "not_found")
    expectFailure(badName, "validation_failed")
    expect(badName.stderr).toContain("name: must be a registry package name")
  }, slow)
})

describe("clark market: configuration", () => {
  it("me takes the token from the flag, else the environment, else the config file", async () => {
    const configFile = writeFile("config/precedence.json", JSON.stringify({ marketplace: { url: server.baseUrl, token: tokens.file } }))
    const xdgConfig = path.join(tmp, "xdg-only")
    fs.mkdirSync(path.join(xdgConfig, "clark"), { recursive: true })
    fs.copyFileSync(configFile, path.join(xdgConfig, "clark", "config.json"))
    const homeConfig = path.join(tmp, "home-only")
    fs.mkdirSync(path.join(homeConfig, ".config", "clark"), { recursive: true })
    fs.writeFileSync(
      path.join(homeConfig, ".config", "clark", "config.json"),
      JSON.stringify({ other: { kept: true }, marketplace: { url: server.baseUrl, token: tokens.home } })
    )
    const unreachable = `http://127.0.0.1:${await freePort()}`

    const [fromFile, fromXdg, fromHome, fromEnv, fromFlag, envUrlBeatsFile, flagUrlBeatsEnv] = await Promise.all([
      clark(["me"], { CLARK_CONFIG: configFile }),
      clark(["me"], { XDG_CONFIG_HOME: xdgConfig }),
      clark(["me"], { HOME: homeConfig, XDG_CONFIG_HOME: "" }),
      clark(["me"], { CLARK_CONFIG: configFile, CLARK_MARKETPLACE_TOKEN: tokens.env }),
      clark(["me", "--json", "--token", tokens.flag], { CLARK_CONFIG: configFile, CLARK_MARKETPLACE_TOKEN: tokens.env }),
      clark(["me"], {
        CLARK_CONFIG: writeFile("config/bad-url.json", JSON.stringify({ marketplace: { url: unreachable, token: tokens.file } })),
        CLARK_MARKETPLACE_URL: server.baseUrl
      }),
      clark(["me", "--url", server.baseUrl, "--token", tokens.flag], { CLARK_MARKETPLACE_URL: unreachable })
    ])

    const firstLine = (outcome: Outcome) => {
      expect(outcome).toMatchObject({ code: 0, stderr: "" })
      return outcome.stdout.split("\n")[0]
    }
    expect(firstLine(fromFile)).toBe("file <file@example.com>")
    expect(firstLine(fromXdg)).toBe("file <file@example.com>")
    expect(firstLine(fromHome)).toBe("home <home@example.com>")
    expect(firstLine(fromEnv)).toBe("env <env@example.com>")
    expect(fromFile.stdout).toMatch(/\nscopes\s+account:read\n/)
    expect(fromFlag).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(fromFlag.stdout)).toEqual((await server.request("/api/v1/me", bearer(tokens.flag))).body)
    expect(JSON.parse(fromFlag.stdout).email).toBe("flag@example.com")
    expect(firstLine(envUrlBeatsFile)).toBe("file <file@example.com>")
    expect(firstLine(flagUrlBeatsEnv)).toBe("flag <flag@example.com>")
  }, slow)

  it("refuses without a token, with a malformed config file, and at an unreachable URL", async () => {
    const notJson = writeFile("config/not-json.json", `{"marketplace": {"token": "${tokens.flag}"`)
    const wrongShape = writeFile("config/wrong-shape.json", JSON.stringify({ marketplace: { url: server.baseUrl, token: 42 } }))
    const unreachable = `http://127.0.0.1:${await freePort()}`

    const [missing, malformed, shapeless, offline] = await Promise.all([
      clark(["me"]),
      clark(["me", "--url", server.baseUrl], { CLARK_CONFIG: notJson }),
      clark(["search"], { CLARK_CONFIG: wrongShape }),
      clark(["me", "--url", unreachable, "--token", tokens.flag], {})
    ])

    expectFailure(missing, "unauthorized")
    expect(missing.stderr).toContain("--token")

    expectFailure(malformed, "invalid_config")
    expect(malformed.stderr).toContain(`${notJson} is not valid JSON`)
    expectFailure(shapeless, "invalid_config")
    expect(shapeless.stderr).toContain(wrongShape)
    expect(shapeless.stderr).toContain("marketplace.token")

    expectFailure(offline, "unreachable")
    expect(offline.stderr).toContain(`cannot reach the marketplace at ${unreachable}`)
  }, slow)
})

describe("clark market: curation", () => {
  const curator = () => ({ CLARK_MARKETPLACE_URL: server.baseUrl, CLARK_MARKETPLACE_TOKEN: tokens.curator })

  it("curate status and feature change a package's curation status", async () => {
    const listed = await clark(["curate", "status", "hidden-thing", "listed", "--reason", "reviewed"], curator())
    expect(listed).toMatchObject({ code: 0, stderr: "", stdout: "hidden-thing: listed\n" })
    expect((await server.request("/api/v1/packages/hidden-thing")).body.curationStatus).toBe("listed")

    const featured = await clark(["curate", "feature", "beta-tool", "--json"], curator())
    expect(featured.code).toBe(0)
    expect(JSON.parse(featured.stdout)).toEqual({ name: "beta-tool", curationStatus: "featured" })
    const off = await clark(["curate", "feature", "beta-tool", "--off"], curator())
    expect(off).toMatchObject({ code: 0, stdout: "beta-tool: listed\n" })

    const [forbidden, first] = await Promise.all([
      clark(["curate", "status", "alpha-tool", "hidden", "--token", tokens.reader]),
      clark(["curate", "status", "alpha-tool", "listed", "--idempotency-key", "cli-key-1"], curator())
    ])
    expectFailure(forbidden, "forbidden")
    expect(first).toMatchObject({ code: 0, stdout: "alpha-tool: listed\n" })

    const [replayed, reused] = await Promise.all([
      clark(["curate", "status", "alpha-tool", "listed", "--idempotency-key", "cli-key-1"], curator()),
      clark(["curate", "status", "alpha-tool", "hidden", "--idempotency-key", "cli-key-1"], curator())
    ])
    expect(replayed).toMatchObject({ code: 0, stdout: "alpha-tool: listed\n" })
    expectFailure(reused, "idempotency_key_reused")
    expect((await server.request("/api/v1/packages/alpha-tool")).body.curationStatus).toBe("listed")
  }, slow)

  it("collection create, show, update, add, reorder and remove", async () => {
    const created = await clark(
      ["collection", "create", "picks", "--title", "Picks", "--description", "Chosen by hand", "--position", "3"],
      curator()
    )
    expect(created).toMatchObject({ code: 0, stderr: "" })
    expect(created.stdout).toBe("picks: Picks (unpublished, position 3)\nChosen by hand\n\nno items\n")

    const [updated, forbidden] = await Promise.all([
      clark(["collection", "update", "picks", "--title", "Top picks", "--published", "true"], curator()),
      clark(["collection", "show", "picks", "--token", tokens.reader])
    ])
    expect(updated).toMatchObject({ code: 0, stderr: "" })
    expect(updated.stdout.split("\n")[0]).toBe("picks: Top picks (published, position 3)")
    expectFailure(forbidden, "forbidden")

    expect((await clark(["collection", "add", "picks", "@acme/widgets", "--note", "The best"], curator())).code).toBe(0)
    const added = await clark(["collection", "add", "picks", "alpha-tool"], curator())
    expect(added.stdout).toMatch(/\n\n1\. @acme\/widgets {2}The best\n2\. alpha-tool\n$/)

    const wrongSet = await clark(["collection", "reorder", "picks", "alpha-tool", "beta-tool"], curator())
    expectFailure(wrongSet, "validation_failed")

    const reordered = await clark(["collection", "reorder", "picks", "alpha-tool", "@acme/widgets"], curator())
    expect(reordered.stdout).toMatch(/\n\n1\. alpha-tool\n2\. @acme\/widgets {2}The best\n$/)

    const removed = await clark(["collection", "remove", "picks", "alpha-tool", "--json"], curator())
    expect(removed.code).toBe(0)
    const state = (await server.request("/api/v1/curation/collections/picks", bearer(tokens.curator))).body
    expect(JSON.parse(removed.stdout)).toEqual(state)
    expect(state).toEqual({
      slug: "picks",
      title: "Top picks",
      description: "Chosen by hand",
      published: true,
      position: 3,
      items: [{ packageName: "@acme/widgets", position: expect.any(Number), note: "The best" }]
    })

    const [shown, missing] = await Promise.all([
      clark(["collection", "show", "picks"], curator()),
      clark(["collection", "show", "nothing-here"], curator())
    ])
    expect(shown.stdout).toBe("picks: Top picks (published, position 3)\nChosen by hand\n\n1. @acme/widgets  The best\n")
    expectFailure(missing, "not_found")
  }, slow)
})

describe("clark market: secrets", () => {
  it("never prints a token, in any output of any command above", () => expectNoSecrets(30))
})
