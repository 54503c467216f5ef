/**
 * The real `clark market pages …` and `clark market tokens …`, end to end (see
 * MarketFixture.ts): a page created, drafted, published and unpublished with
 * the version each write is based on, a stale one refused; a token created
 * (printed once), listed without its value and revoked.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as SqlCredentials from "../../layers/marketplace/sql/SqlCredentials.js"
import { Credentials } from "../../services/marketplace/Credentials.js"
import { clark, expectFailure, server, slow, useMarketplace, writeFile } from "./MarketFixture.js"

useMarketplace()

/** An admin's token with the page builder's scopes and the account's. */
const editorToken = () =>
  server.query(Effect.gen(function*() {
    const credentials = yield* Credentials
    const email = `editor-${Math.random().toString(36).slice(2)}@example.com`
    yield* credentials.createUser({ email, name: "editor", role: "admin" })
    return Redacted.value(yield* credentials.issueApiToken({
      email,
      scopes: ["pages:read", "pages:write", "pages:publish", "account:read", "account:write"]
    }))
  }).pipe(Effect.provide(SqlCredentials.layer), Effect.orDie))

const doc = (text: string) =>
  JSON.stringify({
    schemaVersion: 1,
    layout: { id: "default", version: 1 },
    meta: { title: "CLI guide", description: "How to", locale: "en", noindex: false },
    blocks: [{ id: "p1", type: "paragraph", version: 1, props: { text } }]
  })

describe("clark market pages", () => {
  it("creates, drafts, publishes and unpublishes a page, each write naming the version it is based on", async () => {
    const token = await editorToken()
    const as = (args: ReadonlyArray<string>) => clark([...args, "--token", token])

    const created = await as(["pages", "create", "guides/cli", "--kind", "docs", "--title", "CLI guide"])
    expect(created.code).toBe(0)
    expect(created.stdout).toMatch(/version +1 \(--if-match 1\)/)

    const file = writeFile("guide.json", doc("Run clark."))
    const drafted = await as(["pages", "draft", "guides/cli", "--file", file, "--if-match", "1"])
    expect(drafted.code).toBe(0)
    expect(drafted.stdout).toMatch(/^saved revision 1\n/)
    expect(drafted.stdout).toMatch(/version +2/)

    // Someone else's change meanwhile: the same base version is refused, nothing saved.
    expectFailure(await as(["pages", "draft", "guides/cli", "--file", file, "--if-match", "1"]), "precondition_failed")
    expect((await as(["pages", "revisions", "guides/cli"])).stdout.trim().split("\n")).toHaveLength(2)

    expectFailure(await clark(["page", "guides/cli"]), "not_found")
    const published = await as(["pages", "publish", "guides/cli", "1", "--if-match", "2"])
    expect(published.code).toBe(0)
    expect(published.stdout).toMatch(/published +revision 1 at /)
    const served = await clark(["page", "guides/cli"])
    expect(served.code).toBe(0)
    expect(served.stdout).toContain("Run clark.")

    const listed = await as(["pages", "list"])
    expect(listed.stdout).toMatch(/guides\/cli +docs +3 +1 +1 +CLI guide/)
    const revision = await as(["pages", "revisions", "guides/cli", "1"])
    expect(JSON.parse(revision.stdout)).toEqual(JSON.parse(doc("Run clark.")))

    expect((await as(["pages", "unpublish", "guides/cli", "--if-match", "3"])).code).toBe(0)
    expectFailure(await clark(["page", "guides/cli"]), "not_found")
  }, slow)

  it("refuses a document the contract does not accept before sending it", async () => {
    const token = await editorToken()
    await clark(["pages", "create", "guides/bad", "--title", "Bad", "--token", token])
    const file = writeFile("bad.json", JSON.stringify({ schemaVersion: 2 }))
    expectFailure(await clark(["pages", "draft", "guides/bad", "--file", file, "--if-match", "1", "--token", token]), "validation_failed")
    const notJson = writeFile("bad.txt", "{")
    expectFailure(await clark(["pages", "draft", "guides/bad", "--file", notJson, "--if-match", "1", "--token", token]), "invalid_document")
  }, slow)
})

describe("clark market tokens", () => {
  it("creates a token printed once and alone, lists it without its value, and revokes it", async () => {
    const token = await editorToken()
    const created = await clark(["tokens", "create", "ci", "--scopes", "account:read", "--token", token])
    expect(created.code).toBe(0)
    const secret = created.stdout.trim()
    expect(secret).toMatch(/^cmk_[0-9A-Za-z]{38}$/)
    expect((await clark(["me", "--token", secret])).code).toBe(0)

    const listed = await clark(["tokens", "list", "--token", token])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(/ ci +account:read /)
    expect(listed.stdout).not.toContain(secret)
    const json = await clark(["tokens", "list", "--json", "--token", token])
    const id = (JSON.parse(json.stdout).items as Array<{ id: string; name: string }>).find((item) => item.name === "ci")!.id

    const revoked = await clark(["tokens", "revoke", id, "--token", token])
    expect(revoked.code).toBe(0)
    expect(revoked.stdout).toMatch(new RegExp(`^revoked ${id} \\(ci\\) at `))
    expectFailure(await clark(["me", "--token", secret]), "unauthorized")
    expectFailure(await clark(["tokens", "create", "more", "--scopes", "admin", "--token", token]), "forbidden")
  }, slow)
})
