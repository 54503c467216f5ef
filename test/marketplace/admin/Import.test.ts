/**
 * Import documents: decoding refuses unknown fields and invalid values with the
 * path that names them; loading writes publisher memberships on both dialects,
 * all or nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer, ManagedRuntime } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import * as SqlCredentials from "../../../layers/marketplace/sql/SqlCredentials.js"
import { decodeDocument } from "../../../src/marketplace/admin/Admin.js"
import { demoCatalog } from "../../../src/marketplace/seed/Demo.js"
import { CatalogImporter } from "../../../services/marketplace/CatalogImporter.js"
import { Credentials } from "../../../services/marketplace/Credentials.js"
import { dialects, makeDatabase, type TestDatabase } from "../../support/Databases.js"

const version = (extra: object = {}) => ({
  version: "1.0.0",
  publishedAt: "2024-01-01T00:00:00Z",
  indexedAt: "2024-01-01T00:00:00Z",
  registryIntegrity: "sha512-x",
  ...extra
})
const pkg = (extra: object = {}) => ({ name: "a", displayName: "A", ...extra })

/** The refusal's path and message, or the decoded document. */
const refusal = (input: unknown) =>
  Either.match(decodeDocument(input), {
    onLeft: (error) => ({ tag: error._tag, path: error.path, message: error.message }),
    onRight: (document) => ({ accepted: document })
  })

const versionMessage = "must be three dot-separated integers with an optional hyphenated prerelease suffix"
const dateMessage = "must be an ISO-8601 date-time"

describe("decodeDocument", () => {
  it.each<{ label: string; input: unknown; path: string; message: string | RegExp }>([
    { label: "an unknown package field", input: { packages: [pkg({ colour: "red" })] }, path: "packages[0].colour", message: /^is unexpected/ },
    { label: "an unknown top-level field", input: { extras: [] }, path: "extras", message: /^is unexpected/ },
    {
      label: "an unknown collection item field",
      input: { collections: [{ slug: "c", title: "C", items: [{ packageName: "a", colour: 1 }] }] },
      path: "collections[0].items[0].colour",
      message: /^is unexpected/
    },
    {
      label: "an unknown version field",
      input: { packages: [pkg({ versions: [version({ size: 1 })] })] },
      path: "packages[0].versions[0].size",
      message: /^is unexpected/
    },
    {
      label: "a curation status that does not exist",
      input: { packages: [pkg(), pkg({ name: "b", curationStatus: "approved" })] },
      path: "packages[1].curationStatus",
      message: /"approved"/
    },
    {
      label: "a date that is not a date",
      input: { packages: [pkg({ versions: [version({ publishedAt: "yesterday" })] })] },
      path: "packages[0].versions[0].publishedAt",
      message: dateMessage
    },
    {
      label: "a date without a time",
      input: { packages: [pkg({ versions: [version({ indexedAt: "2024-01-01" })] })] },
      path: "packages[0].versions[0].indexedAt",
      message: dateMessage
    },
    {
      label: "a day that does not exist",
      input: { packages: [pkg({ versions: [version({ publishedAt: "2024-02-30T00:00:00Z" })] })] },
      path: "packages[0].versions[0].publishedAt",
      message: dateMessage
    },
    {
      label: "a bad package updatedAt",
      input: { packages: [pkg({ updatedAt: "2024-13-01T00:00:00Z" })] },
      path: "packages[0].updatedAt",
      message: dateMessage
    },
    {
      label: "a version that is not three numbers",
      input: { packages: [pkg({ versions: [version(), version({ version: "1.0" })] })] },
      path: "packages[0].versions[1].version",
      message: versionMessage
    },
    { label: "a bad latestVersion", input: { packages: [pkg({ latestVersion: "v1" })] }, path: "packages[0].latestVersion", message: versionMessage },
    { label: "a bad package name", input: { packages: [pkg({ name: "Bad Name" })] }, path: "packages[0].name", message: /registry package name/ },
    { label: "a bad category slug", input: { categories: [{ slug: "Bad Slug", name: "X" }] }, path: "categories[0].slug", message: /lowercase/ },
    {
      label: "a page without revisions",
      input: { pages: [{ slug: "about", kind: "custom", title: "About", revisions: [] }] },
      path: "pages[0].revisions",
      message: /.+/
    },
    {
      label: "the first of several faults",
      input: { packages: [pkg({ colour: 1 }), pkg({ name: "b" }), pkg({ name: "c", curationStatus: "approved" })] },
      path: "packages[0].colour",
      message: /^is unexpected/
    },
    {
      label: "a publisher owner that is not an email",
      input: { publishers: [{ slug: "p", name: "P", owners: ["ada@example.com", "ada"] }] },
      path: "publishers[0].owners[1]",
      message: "must be an email address"
    },
    {
      label: "a publisher member that is not a string",
      input: { publishers: [{ slug: "p", name: "P", members: [7] }] },
      path: "publishers[0].members[0]",
      message: /.+/
    },
    { label: "a document that is not an object", input: [], path: "(document)", message: /.+/ }
  ])("refuses $label at $path", ({ input, message, path }) => {
    const result = refusal(input)
    expect(result).toEqual({ tag: "ImportRejected", path, message: expect.stringMatching(message) })
  })

  it("accepts the demo catalogue", () => {
    const result = decodeDocument(demoCatalog(new Date("2026-01-01T00:00:00Z")))
    expect(Either.isRight(result)).toBe(true)
    const document = Either.getOrThrow(result)
    expect(document.packages.length).toBeGreaterThanOrEqual(150)
    expect(document.packages.every((p) => p.versions.length > 0)).toBe(true)
  })

  it("fills defaults and stores instants in canonical UTC", () => {
    expect(refusal({ packages: [pkg({ versions: [version({ publishedAt: "2024-01-01T02:00:00+02:00" })] })] })).toEqual({
      accepted: {
        categories: [],
        publishers: [],
        collections: [],
        pages: [],
        packages: [{
          name: "a",
          displayName: "A",
          description: "",
          publisher: null,
          categorySlug: null,
          curationStatus: "unreviewed",
          keywords: [],
          homepage: null,
          repositoryUrl: null,
          license: null,
          versions: [{
            version: "1.0.0",
            publishedAt: "2024-01-01T00:00:00.000Z",
            indexedAt: "2024-01-01T00:00:00.000Z",
            registryIntegrity: "sha512-x",
            tarballSha512Verified: false,
            hasProvenance: false,
            readmeHtml: null,
            platforms: [],
            facets: [],
            permissions: [],
            previews: [],
            securityChecks: []
          }]
        }]
      }
    })
  })
})

// ---------------------------------------------------------------------------
// Loading publisher memberships

const importerLayer = (db: TestDatabase) =>
  Layer.mergeAll(SqlCatalogImporter.layer, SqlCredentials.layer).pipe(Layer.provideMerge(Database.layer(db.parsed)))

const load = (input: unknown) =>
  Effect.flatMap(CatalogImporter, (importer) => importer.load(Either.getOrThrow(decodeDocument(input))))

const memberships = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ slug: string; email: string; role: string }>`SELECT p.slug, u.email, m.role
    FROM publisher_members m JOIN publishers p ON p.id = m.publisher_id JOIN users u ON u.id = m.user_id
    ORDER BY p.slug, u.email`).pipe(Effect.orDie)

/** What a refused import must leave unchanged. */
const publishersAndMembers = Effect.all({
  publishers: Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT slug, name, verified FROM publishers ORDER BY slug`).pipe(Effect.orDie),
  memberships
})

describe.each(dialects)("publisher memberships on %s", (dialect) => {
  let db: TestDatabase
  let runtime: ManagedRuntime.ManagedRuntime<Layer.Layer.Success<ReturnType<typeof importerLayer>>, never>
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof importerLayer>>>) =>
    runtime.runPromise(effect)

  beforeAll(async () => {
    db = await makeDatabase(dialect, { migrated: true })
    runtime = ManagedRuntime.make(importerLayer(db))
    await run(Effect.flatMap(Credentials, (credentials) =>
      Effect.forEach(["ada@example.com", "bob@example.com", "cy@example.com"], (email) =>
        credentials.createUser({ email, name: email }))))
  })
  afterAll(async () => {
    await runtime.dispose()
    await db.drop()
  })

  it("writes owners and members, matching emails case-insensitively, and re-imports by upserting roles", async () => {
    const counts = await run(load({
      publishers: [
        { slug: "acme", name: "Acme", owners: ["Ada@Example.com"], members: ["bob@example.com", "CY@Example.COM"] },
        { slug: "solo", name: "Solo", owners: ["bob@example.com"] },
        { slug: "empty", name: "Empty" }
      ]
    }))
    expect(counts.publishers).toBe(3)
    expect(await run(memberships)).toEqual([
      { slug: "acme", email: "ada@example.com", role: "owner" },
      { slug: "acme", email: "bob@example.com", role: "member" },
      { slug: "acme", email: "cy@example.com", role: "member" },
      { slug: "solo", email: "bob@example.com", role: "owner" }
    ])

    // Bob becomes an owner; Ada and Cy, not listed this time, keep their memberships.
    await run(load({ publishers: [{ slug: "acme", name: "Acme", owners: ["bob@example.com"] }] }))
    expect(await run(memberships)).toEqual([
      { slug: "acme", email: "ada@example.com", role: "owner" },
      { slug: "acme", email: "bob@example.com", role: "owner" },
      { slug: "acme", email: "cy@example.com", role: "member" },
      { slug: "solo", email: "bob@example.com", role: "owner" }
    ])
  })

  it.each([
    {
      label: "an email without an account",
      publishers: [
        { slug: "acme", name: "Renamed", owners: ["cy@example.com"] },
        { slug: "newcomer", name: "Newcomer", owners: ["ada@example.com"], members: ["bob@example.com", "Nobody@Example.com"] }
      ],
      path: "publishers[1].members[1]",
      message: "nobody@example.com"
    },
    {
      label: "an account listed twice for one publisher",
      publishers: [{ slug: "newcomer", name: "Newcomer", owners: ["ada@example.com"], members: ["ADA@example.com"] }],
      path: "publishers[0].members[0]",
      message: "listed twice"
    }
  ])("refuses $label at $path and writes nothing", async ({ message, path, publishers }) => {
    const before = await run(publishersAndMembers)
    const error = await run(Effect.flip(load({ publishers })))
    expect(error).toMatchObject({ _tag: "ImportRejected", path })
    expect(error.message).toContain(message)
    expect(await run(publishersAndMembers)).toEqual(before)
  })
})
