/**
 * Publishers on both databases, through the real server: creating and reading them, members with roles
 * (the last owner stays, a member does no owner's part), verification by the homepage's well-known file
 * (a real local HTTPS server) and by DNS (a scripted resolver), package claims read from the registry
 * stand-in (the manifest's clark.publisher or a maintainer), the public summary's `publisher.verified`
 * following both, and the audit entries every write leaves. Each refusal answers its status and code and
 * stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Scope } from "effect"
import * as LivePublisherChecks from "../../../layers/marketplace/publishers/PublisherChecks.js"
import * as SqlAuditLog from "../../../layers/marketplace/sql/SqlAuditLog.js"
import * as SqlPublishers from "../../../layers/marketplace/sql/SqlPublishers.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import * as Registry from "../../support/registry/Registry.js"
import { packClark } from "../../support/registry/ClarkPackages.js"
import { account, bearer, call, rows } from "../fixtures/Accounts.js"
import { type Homepage, startHomepage } from "../fixtures/Homepage.js"
import { at, type Document, version } from "../fixtures/Listing.js"

const file = "/.well-known/clark-publisher.txt"
const rw = ["publishers:read", "publishers:write"] as const

const ann = account("ann@acme.test", "user", { rw, read: ["publishers:read"] })
const bob = account("bob@acme.test", "user", { rw })
const eve = account("eve@example.com", "user", { rw })
const gina = account("gina@globex.test", "user", { rw })
const root = account("root@example.com", "admin", { audit: ["admin"], rw })

const listed = (name: string) => ({
  name,
  displayName: name,
  curationStatus: "listed" as const,
  updatedAt: at(1),
  versions: [version("1.0.0", 1)]
})

const document: Document = {
  publishers: [{ slug: "globex", name: "Globex", verified: true, owners: ["gina@globex.test"] }],
  packages: [
    listed("notes"),
    listed("maintained"),
    listed("stranger"),
    listed("unregistered"),
    { ...listed("tools"), publisher: "globex" },
    { ...listed("moving"), publisher: "globex" }
  ]
}

let registry: Registry.Registry
let homepage: Homepage
const scope = Effect.runSync(Scope.make())

beforeAll(async () => {
  registry = await Effect.runPromise(Scope.extend(Registry.start, scope))
  homepage = await startHomepage()
  const publish = async (name: string, extra: Partial<Registry.Publish>) =>
    registry.publish({ name, version: "1.0.0", tarball: await packClark({ name, version: "1.0.0" }), ...extra })
  await publish("notes", { manifest: { clark: { manifestVersion: 1, publisher: "acme" } } })
  await publish("maintained", { maintainers: [{ name: "bob", email: "BOB@acme.test" }] })
  await publish("stranger", { maintainers: [{ name: "mallory", email: "mallory@example.com" }] })
  await publish("tools", { maintainers: [{ name: "bob", email: "bob@acme.test" }] })
  await publish("moving", { manifest: { clark: { manifestVersion: 1, publisher: "acme" } } })
})
afterAll(async () => {
  await homepage?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

describe.each(dialects)("publishers on %s", (dialect) => {
  let server: RunningMarketplace
  const acmeHome = () => "https://acme.test/"

  beforeAll(async () => {
    const checks = LivePublisherChecks.layer({
      ca: homepage.cert,
      dialVia: homepage.dialLocally,
      dialPort: homepage.port,
      registryUrl: Option.some(new URL(registry.url))
    }).pipe(Layer.provide(homepage.resolverLayer))
    server = await startMarketplace(dialect, document, {
      setup: Effect.all([ann.setup, bob.setup, eve.setup, gina.setup, root.setup]),
      // The live publishers over checks that reach the local homepage and registry instead of the world.
      services: (live) =>
        Layer.merge(live, SqlPublishers.layer.pipe(Layer.provide(checks), Layer.provide(SqlAuditLog.layer)))
    })
  })
  afterAll(() => server.close())

  const as = (token: string) => (method: string, path: string, body?: unknown) =>
    call(server, { method, path: `/api/v1${path}`, body, headers: bearer(token) })
  const annRw = () => as(ann.account.tokens.rw!)
  const bobRw = () => as(bob.account.tokens.rw!)
  const eveRw = () => as(eve.account.tokens.rw!)

  const expectError = (response: { status: number; body: any }, status: number, code: string) => {
    expect(response.status).toBe(status)
    expect(response.body.error).toMatchObject({ code, message: expect.any(String) })
  }
  const audit = async (target: string) =>
    (await as(root.account.tokens.audit!)("GET", `/admin/audit?target=${encodeURIComponent(target)}`)).body.items as Array<any>
  const stored = (slug: string) => server.query(rows("publishers", `slug = '${slug}'`))
  const summary = async (name: string) => (await server.request(`/api/v1/packages/${name}`)).body.publisher

  it("creates a publisher with its creator as owner; the slug again is 409; bad fields are 400", async () => {
    const created = await annRw()("POST", "/publishers", { slug: "acme", name: "Acme", homepage: acmeHome() })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      slug: "acme",
      name: "Acme",
      homepage: acmeHome(),
      verification: { verified: false, method: null, verifiedAt: null },
      role: "owner",
      members: [{ userId: ann.account.id, name: "ann", email: "ann@acme.test", role: "owner" }]
    })
    expectError(await eveRw()("POST", "/publishers", { slug: "acme", name: "Mine" }), 409, "conflict")
    expect((await stored("acme"))[0]).toMatchObject({ name: "Acme" })

    for (const body of [
      { slug: "insecure", name: "Insecure", homepage: "http://insecure.test/" },
      { slug: "creds", name: "Creds", homepage: "https://user:pw@creds.test/" },
      { slug: "Bad_Slug", name: "Bad" },
      { slug: "noname", name: "" }
    ]) {
      expectError(await eveRw()("POST", "/publishers", body), 400, "validation_failed")
    }
    expect(await server.query(rows("publishers", "slug IN ('insecure', 'creds', 'noname')"))).toEqual([])
    expectError(await as(ann.account.tokens.read!)("POST", "/publishers", { slug: "ro", name: "RO" }), 403, "forbidden")

    const [entry] = await audit("acme")
    expect(entry).toMatchObject({
      actorId: ann.account.id,
      action: "publisher.create",
      targetKind: "publisher",
      before: null,
      after: { name: "Acme", homepage: acmeHome(), verified: false, method: null }
    })
  })

  it("shows a publisher to its members and admins only; lists the caller's own", async () => {
    expect((await as(ann.account.tokens.read!)("GET", "/publishers/acme")).status).toBe(200)
    expectError(await eveRw()("GET", "/publishers/acme"), 404, "not_found")
    expectError(await eveRw()("GET", "/publishers/nobody"), 404, "not_found")
    expect((await annRw()("GET", "/publishers")).body.items.map((p: any) => p.slug)).toEqual(["acme"])
    expect((await eveRw()("GET", "/publishers")).body.items).toEqual([])
  })

  it("adds and removes members; a member does no owner's part; the last owner stays", async () => {
    const added = await annRw()("POST", "/publishers/acme/members", { email: "BOB@acme.test", role: "member" })
    expect(added.status).toBe(200)
    expect(added.body.members.map((m: any) => [m.email, m.role])).toEqual([["ann@acme.test", "owner"], ["bob@acme.test", "member"]])
    expect((await bobRw()("GET", "/publishers/acme")).body.role).toBe("member")

    expectError(await bobRw()("POST", "/publishers/acme/members", { email: "eve@example.com", role: "member" }), 403, "forbidden")
    expectError(await bobRw()("PATCH", "/publishers/acme", { name: "Bob's" }), 403, "forbidden")
    expectError(await bobRw()("DELETE", `/publishers/acme/members/${ann.account.id}`), 403, "forbidden")
    expectError(await annRw()("POST", "/publishers/acme/members", { email: "nobody@example.com", role: "member" }), 404, "not_found")
    expectError(await annRw()("POST", "/publishers/acme/members", { email: "ann@acme.test", role: "member" }), 409, "conflict")
    expectError(await annRw()("DELETE", `/publishers/acme/members/${ann.account.id}`), 409, "conflict")
    expectError(await eveRw()("DELETE", `/publishers/acme/members/${bob.account.id}`), 404, "not_found")
    expect((await server.query(rows("publisher_members", `user_id = '${ann.account.id}'`)))[0]).toMatchObject({ role: "owner" })
    expect(await server.query(rows("publisher_members", `user_id = '${eve.account.id}'`))).toEqual([])

    // With a second owner the first may step down; eve joins and leaves by herself.
    await annRw()("POST", "/publishers/acme/members", { email: "bob@acme.test", role: "owner" })
    await annRw()("POST", "/publishers/acme/members", { email: "eve@example.com", role: "member" })
    const left = await eveRw()("DELETE", `/publishers/acme/members/${eve.account.id}`)
    expect(left.status).toBe(200)
    expect(left.body.members.map((m: any) => m.email)).toEqual(["ann@acme.test", "bob@acme.test"])

    const entries = (await audit("acme")).filter((entry) => entry.action.startsWith("publisher.member"))
    expect(entries.map((entry) => [entry.action, entry.before, entry.after])).toEqual([
      ["publisher.member.remove", { userId: eve.account.id, role: "member" }, null],
      ["publisher.member.add", null, { userId: eve.account.id, role: "member" }],
      ["publisher.member.role", { userId: bob.account.id, role: "member" }, { userId: bob.account.id, role: "owner" }],
      ["publisher.member.add", null, { userId: bob.account.id, role: "member" }]
    ])
  })

  it("of two owners demoting each other at once, exactly one succeeds: the publisher keeps an owner", async () => {
    await annRw()("POST", "/publishers", { slug: "duo", name: "Duo" })
    await annRw()("POST", "/publishers/duo/members", { email: "bob@acme.test", role: "owner" })
    for (let round = 0; round < 3; round++) {
      const [first, second] = await Promise.all([
        annRw()("POST", "/publishers/duo/members", { email: "bob@acme.test", role: "member" }),
        bobRw()("POST", "/publishers/duo/members", { email: "ann@acme.test", role: "member" })
      ])
      // The loser ran after the winner's commit (the row lock), found itself a member and did no owner's part.
      expect([first.status, second.status].sort()).toEqual([200, 403])
      const members = await server.query(rows("publisher_members", "publisher_id = (SELECT id FROM publishers WHERE slug = 'duo')"))
      expect(members.filter((member) => member.role === "owner")).toHaveLength(1)
      // Back to two owners for the next round, by the one still owning it.
      const owner = first.status === 200 ? annRw() : bobRw()
      const demoted = first.status === 200 ? "bob@acme.test" : "ann@acme.test"
      expect((await owner("POST", "/publishers/duo/members", { email: demoted, role: "owner" })).status).toBe(200)
    }
  })

  it("refuses hostile bodies and paths with 400 in the envelope, never a 500", async () => {
    expectError(await annRw()("POST", "/publishers/acme/verification", { method: "ftp" }), 400, "validation_failed")
    expectError(await annRw()("POST", "/publishers/acme/members", { email: "ann@acme.test", role: "admin" }), 400, "validation_failed")
    expectError(await annRw()("PATCH", "/publishers/acme", { homepage: `https://${"a".repeat(300)}.test/` }), 400, "validation_failed")
    expectError(await annRw()("POST", "/publishers/acme/claims", { packageName: "../../etc/passwd" }), 400, "validation_failed")
    expectError(await annRw()("DELETE", "/publishers/acme/members/usr%20x"), 400, "validation_failed")
    expectError(await annRw()("GET", "/publishers/NOT_A_SLUG"), 400, "validation_failed")
    const unreadable = await call(server, {
      method: "POST",
      path: "/api/v1/publishers",
      headers: { ...bearer(ann.account.tokens.rw!), "content-type": "application/json" }
    })
    expect(unreadable.status).toBe(400)
  })

  it("verifies the homepage by its well-known file, refusing until the file holds the token", async () => {
    expectError(await annRw()("POST", "/publishers/acme/verification", { method: "well-known" }), 409, "conflict")
    const challenge = await annRw()("POST", "/publishers/acme/verification/challenge")
    expect(challenge.status).toBe(200)
    expect(challenge.body).toEqual({
      token: expect.stringMatching(/^clark-publisher-[A-Za-z0-9_-]{32}$/),
      wellKnownUrl: `https://acme.test${file}`,
      dnsName: "_clark-publisher.acme.test"
    })
    // Asking again gives the same token.
    expect((await annRw()("POST", "/publishers/acme/verification/challenge")).body.token).toBe(challenge.body.token)

    homepage.answer("acme.test", file, { kind: "file", body: "someone else's token" })
    const refused = await annRw()("POST", "/publishers/acme/verification", { method: "well-known" })
    expectError(refused, 409, "conflict")
    expect(refused.body.error.details).toEqual({ method: "well-known", problem: expect.stringContaining("does not hold the token") })
    expect((await stored("acme"))[0]).toMatchObject({ verifiedAt: null })

    homepage.answer("acme.test", file, { kind: "file", body: `${challenge.body.token}\n` })
    const verified = await annRw()("POST", "/publishers/acme/verification", { method: "well-known" })
    expect(verified.status).toBe(200)
    expect(verified.body.verification).toEqual({ verified: true, method: "well-known", verifiedAt: expect.any(String) })
    expect((await audit("acme"))[0]).toMatchObject({
      action: "publisher.verify",
      before: { verified: false },
      after: { verified: true, method: "well-known" }
    })
    // The token never reaches the audit log.
    expect(JSON.stringify(await audit("acme"))).not.toContain(challenge.body.token)
  })

  it("claims a package its manifest names, and the public summary shows the verified publisher", async () => {
    expect(await summary("notes")).toBeNull()
    const claimed = await bobRw()("POST", "/publishers/acme/claims", { packageName: "notes" })
    expect(claimed.status).toBe(201)
    expect(claimed.body).toMatchObject({ packageName: "notes", publisherSlug: "acme", evidence: "manifest", claimedBy: bob.account.id })
    expect(await summary("notes")).toEqual({ slug: "acme", name: "Acme", verified: true })
    expectError(await annRw()("POST", "/publishers/acme/claims", { packageName: "notes" }), 409, "conflict")
    expect((await audit("notes"))[0]).toMatchObject({
      action: "publisher.claim",
      targetKind: "package",
      before: { publisher: null },
      after: { publisher: "acme", evidence: "manifest" }
    })
  })

  it("claims a package a member maintains in the registry; refuses one nobody shows to be theirs", async () => {
    const claimed = await annRw()("POST", "/publishers/acme/claims", { packageName: "maintained" })
    expect(claimed.status).toBe(201)
    expect(claimed.body.evidence).toBe("maintainer")

    const refused = await annRw()("POST", "/publishers/acme/claims", { packageName: "stranger" })
    expectError(refused, 403, "forbidden")
    expect(refused.body.error.details.reason).toContain("nor is a registry maintainer a member")
    // Another publisher's package is not taken over by a maintainer's word alone.
    const held = await annRw()("POST", "/publishers/acme/claims", { packageName: "tools" })
    expectError(held, 409, "conflict")
    expect(held.body.error.details).toEqual({ publisher: "globex" })
    expectError(await annRw()("POST", "/publishers/acme/claims", { packageName: "unregistered" }), 404, "not_found")
    expectError(await annRw()("POST", "/publishers/acme/claims", { packageName: "not-in-catalogue" }), 404, "not_found")
    expectError(await eveRw()("POST", "/publishers/acme/claims", { packageName: "maintained" }), 404, "not_found")
    expect(await server.query(rows("publisher_claims", "package_name IN ('stranger', 'tools', 'unregistered')"))).toEqual([])
    expect(await summary("stranger")).toBeNull()
    expect(await summary("tools")).toEqual({ slug: "globex", name: "Globex", verified: true })

    const claims = await as(ann.account.tokens.read!)("GET", "/publishers/acme/claims")
    expect(claims.body.items.map((c: any) => [c.packageName, c.evidence])).toEqual([["maintained", "maintainer"], ["notes", "manifest"]])
  })

  it("moves another publisher's package when the package's manifest names the claimant", async () => {
    expect(await summary("moving")).toEqual({ slug: "globex", name: "Globex", verified: true })
    // globex's own owner cannot claim a package whose manifest names acme and whose maintainers are strangers.
    expectError(await as(gina.account.tokens.rw!)("POST", "/publishers/globex/claims", { packageName: "notes" }), 403, "forbidden")
    const moved = await annRw()("POST", "/publishers/acme/claims", { packageName: "moving" })
    expect(moved.status).toBe(201)
    expect(moved.body.evidence).toBe("manifest")
    expect(await summary("moving")).toEqual({ slug: "acme", name: "Acme", verified: true })
    expect((await audit("moving"))[0]).toMatchObject({
      action: "publisher.claim",
      before: { publisher: "globex" },
      after: { publisher: "acme", evidence: "manifest" }
    })
  })

  it("lets an admin who is no member read and change a publisher, with no role of its own", async () => {
    const read = await as(root.account.tokens.rw!)("GET", "/publishers/globex")
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ slug: "globex", role: null, members: [{ email: "gina@globex.test", role: "owner" }] })
    const renamed = await as(root.account.tokens.rw!)("PATCH", "/publishers/globex", { name: "Globex Corp" })
    expect(renamed.body.name).toBe("Globex Corp")
    expect((await as(root.account.tokens.rw!)("GET", "/publishers")).body.items).toEqual([])
    expect((await audit("globex"))[0]).toMatchObject({ actorId: root.account.id, action: "publisher.update" })
  })

  it("clears the verification when the homepage changes, and verifies again by DNS", async () => {
    const moved = await annRw()("PATCH", "/publishers/acme", { homepage: "https://www.acme.test/" })
    expect(moved.status).toBe(200)
    expect(moved.body.verification).toEqual({ verified: false, method: null, verifiedAt: null })
    expect(await summary("notes")).toEqual({ slug: "acme", name: "Acme", verified: false })
    expect((await audit("acme"))[0]).toMatchObject({
      action: "publisher.update",
      before: { homepage: acmeHome(), verified: true },
      after: { homepage: "https://www.acme.test/", verified: false }
    })

    const challenge = await annRw()("POST", "/publishers/acme/verification/challenge")
    expect(challenge.body.dnsName).toBe("_clark-publisher.www.acme.test")
    expectError(await annRw()("POST", "/publishers/acme/verification", { method: "dns" }), 409, "conflict")
    homepage.txt.set("_clark-publisher.www.acme.test", [[challenge.body.token]])
    const verified = await annRw()("POST", "/publishers/acme/verification", { method: "dns" })
    expect(verified.body.verification).toMatchObject({ verified: true, method: "dns" })
    expect(await summary("notes")).toEqual({ slug: "acme", name: "Acme", verified: true })
  })

  it("gives a claimed package up, leaving its listing without a publisher", async () => {
    expectError(await bobRw()("DELETE", "/publishers/acme/claims/stranger"), 404, "not_found")
    const released = await bobRw()("DELETE", "/publishers/acme/claims/maintained")
    expect(released.status).toBe(200)
    expect(released.body).toMatchObject({ packageName: "maintained", publisherSlug: "acme" })
    expect(await summary("maintained")).toBeNull()
    expect(await server.query(rows("publisher_claims", "package_name = 'maintained'"))).toEqual([])
    expect((await audit("maintained"))[0]).toMatchObject({ action: "publisher.release", after: { publisher: null } })
  })
})
