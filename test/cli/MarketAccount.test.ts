/**
 * The real `clark market` client, end to end (see MarketFixture.ts), for the
 * rest of the API's operations: health, versions, categories, collections,
 * pages, and the account's listings and deletion.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DatabaseHealth } from "../../services/marketplace/DatabaseHealth.js"
import { startMarketplace } from "../support/MarketplaceServer.js"
import {
  bearer,
  clark,
  expectFailure,
  expectNoSecrets,
  onTerminal,
  server,
  sessions,
  slow,
  tokens,
  useMarketplace
} from "./MarketFixture.js"

useMarketplace()

describe("clark market: every other public read", () => {
  it("health prints the status line, or with --json the body; a degraded marketplace exits 1 with its line", async () => {
    const degraded = await startMarketplace("sqlite", {}, {
      services: (live) => Layer.merge(live, Layer.succeed(DatabaseHealth, { check: Effect.succeed(false) }))
    })
    try {
      const [ok, json, failing] = await Promise.all([
        clark(["health"]),
        clark(["health", "--json"]),
        clark(["health"], { CLARK_MARKETPLACE_URL: degraded.baseUrl })
      ])
      expect(ok).toMatchObject({ code: 0, stderr: "" })
      expect(ok.stdout).toMatch(/^ok: database ok, environment development, checked \d{4}-\d{2}-\d{2}T[\d:.]+Z\n$/)
      expect(json).toMatchObject({ code: 0, stderr: "" })
      expect(JSON.parse(json.stdout)).toEqual({ status: "ok", environment: "development", checkedAt: expect.any(String), checks: { database: "ok" } })
      expectFailure(failing, "degraded")
      expect(failing.stderr).toMatch(/^degraded: database error, environment development, checked /)
    } finally {
      await degraded.close()
    }
  }, slow)

  it("versions lists a package's versions newest first; an unknown package is not_found", async () => {
    const [table, json, missing] = await Promise.all([
      clark(["versions", "@acme/widgets"]),
      clark(["versions", "@acme/widgets", "--json"]),
      clark(["versions", "no-such-package"])
    ])
    expect(table).toMatchObject({ code: 0, stderr: "" })
    const lines = table.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^VERSION\s+PUBLISHED\s+VERIFIED\s+PROVENANCE$/)
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(["1.1.0", "1.0.0"])
    expect(lines[1]).toMatch(/^1\.1\.0\s+2024-01-20T00:00:00\.000Z\s+(yes|no)\s+(yes|no)$/)
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/packages/%40acme%2Fwidgets/versions")).body)
    expectFailure(missing, "not_found")
  }, slow)

  it("categories lists them with their public package counts, or shows one", async () => {
    const [list, json, one, missing] = await Promise.all([
      clark(["categories"]),
      clark(["categories", "--json"]),
      clark(["categories", "tools"]),
      clark(["categories", "nothing-here"])
    ])
    expect(list).toMatchObject({ code: 0, stderr: "" })
    expect(list.stdout.trimEnd().split("\n")).toEqual([
      expect.stringMatching(/^SLUG\s+NAME\s+PACKAGES\s+DESCRIPTION$/),
      expect.stringMatching(/^(tools\s+Tools\s+1\s+Things that help|empty\s+Empty\s+0)$/),
      expect.stringMatching(/^(tools\s+Tools\s+1\s+Things that help|empty\s+Empty\s+0)$/)
    ])
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/categories")).body)
    expect(one).toMatchObject({ code: 0, stderr: "", stdout: "tools: Tools (1 package)\nThings that help\n" })
    expectFailure(missing, "not_found")
  }, slow)

  it("collections lists the published ones, or shows one with its packages in order; unpublished ones are not_found", async () => {
    const [list, json, one, unpublished] = await Promise.all([
      clark(["collections"]),
      clark(["collections", "--json"]),
      clark(["collections", "starter"]),
      clark(["collections", "secret"])
    ])
    expect(list).toMatchObject({ code: 0, stderr: "" })
    const rows = list.stdout.trimEnd().split("\n")
    expect(rows[0]).toMatch(/^SLUG\s+TITLE\s+DESCRIPTION$/)
    expect(rows).toContainEqual(expect.stringMatching(/^starter\s+Starter kit\s+Where to begin$/))
    expect(list.stdout).not.toContain("secret")
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/collections")).body)
    expect(one).toMatchObject({ code: 0, stderr: "" })
    const shown = one.stdout.split("\n")
    expect(shown.slice(0, 3)).toEqual(["starter: Starter kit", "Where to begin", ""])
    expect(shown.slice(4, 6).map((line) => line.split(/\s+/)[0])).toEqual(["beta-tool", "@acme/widgets"])
    expectFailure(unpublished, "not_found")
  }, slow)

  it("page prints the Markdown rendering, --json the published page; a nested slug works, a draft is not_found", async () => {
    const [markdown, json, draft, invalid] = await Promise.all([
      clark(["page", "docs/intro"]),
      clark(["page", "docs/intro", "--json"]),
      clark(["page", "draft"]),
      clark(["page", "Not/A/Slug"])
    ])
    expect(markdown).toMatchObject({ code: 0, stderr: "" })
    const rendered = (await server.request("/api/v1/pages/docs%2Fintro?format=md")).text
    expect(markdown.stdout).toBe(`${rendered.trimEnd()}\n`)
    expect(markdown.stdout).toContain("# Getting started")
    expect(json).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/pages/docs%2Fintro")).body)
    expect(JSON.parse(json.stdout).page).toMatchObject({ slug: "docs/intro", kind: "docs", title: "Introduction" })
    expectFailure(draft, "not_found")
    expectFailure(invalid, "validation_failed")
  }, slow)
})

describe("clark market: the account", () => {
  it("me packages lists the listings the caller's publishers own", async () => {
    const [owned, json, none] = await Promise.all([
      clark(["me", "packages", "--token", tokens.owner]),
      clark(["me", "packages", "--json", "--token", tokens.owner]),
      clark(["me", "packages", "--token", tokens.reader])
    ])
    expect(owned).toMatchObject({ code: 0, stderr: "" })
    expect(owned.stdout.trimEnd().split("\n")).toEqual([
      expect.stringMatching(/^NAME\s+VERSION\s+STATUS\s+PUBLISHER$/),
      expect.stringMatching(/^@acme\/widgets\s+1\.1\.0\s+featured\s+acme \(verified\)$/)
    ])
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/me/packages", bearer(tokens.owner))).body)
    expect(none).toMatchObject({ code: 0, stderr: "", stdout: "no listings owned by your publishers\n" })
  }, slow)

  it("me delete refuses without a terminal unless --yes, needs a session, and with --yes deletes the account", async () => {
    const [unconfirmed, withApiToken] = await Promise.all([
      clark(["me", "delete", "--token", sessions.leaver]),
      clark(["me", "delete", "--yes", "--token", tokens.owner])
    ])
    // The test's stdin is not a terminal: nothing could confirm, so nothing is sent.
    expectFailure(unconfirmed, "confirmation_required")
    expect(unconfirmed.stderr).toContain("--yes")
    expect((await server.request("/api/v1/me", bearer(sessions.leaver))).status).toBe(200)
    expectFailure(withApiToken, "forbidden")
    expect((await server.request("/api/v1/me", bearer(tokens.owner))).status).toBe(200)

    const [deleted, deletedJson] = await Promise.all([
      clark(["me", "delete", "--yes", "--token", sessions.leaver]),
      clark(["me", "delete", "--yes", "--json", "--token", sessions.jsonLeaver])
    ])
    expect(deleted).toMatchObject({ code: 0, stderr: "" })
    expect(deleted.stdout).toBe("account deleted; removed 0 API tokens, 0 device links, 0 OAuth grants, 0 publishers, 0 media\n")
    expect(deletedJson).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(deletedJson.stdout)).toEqual({
      deleted: true,
      removed: { apiTokens: 0, deviceLinks: 0, oauthGrants: 0, publishers: 0, media: 0 }
    })
    expect((await server.request("/api/v1/me", bearer(sessions.leaver))).status).toBe(401)
    expect((await server.request("/api/v1/me", bearer(sessions.jsonLeaver))).status).toBe(401)
    expectFailure(await clark(["me", "--token", sessions.leaver]), "unauthorized")
  }, slow)
})

describe("clark market: me delete on a terminal", () => {
  it("names the account and asks; no keeps it (exit 1), yes deletes it", async () => {
    const [kept, deleted] = await Promise.all([
      onTerminal(["me", "delete", "--token", sessions.ttyKeeper], "n"),
      onTerminal(["me", "delete", "--token", sessions.ttyLeaver], "y")
    ])
    expect(kept.output).toContain("Delete the account ttyKeeper <tty-keeper@example.com> and everything tied to it?")
    expect(kept.code).toBe(1)
    expect(kept.output).toContain("cancelled: nothing was deleted")
    expect((await server.request("/api/v1/me", bearer(sessions.ttyKeeper))).status).toBe(200)

    expect(deleted.output).toContain("Delete the account ttyLeaver <tty-leaver@example.com>")
    expect(deleted.code).toBe(0)
    expect(deleted.output).toContain("account deleted; removed 0 API tokens")
    expect((await server.request("/api/v1/me", bearer(sessions.ttyLeaver))).status).toBe(401)
  }, slow)
})

describe("clark market: secrets", () => {
  it("never prints a token or session token, in any output of any command above", () => expectNoSecrets(20))
})
