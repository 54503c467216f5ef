/**
 * The package read cache on both dialects: a repeated read is answered from
 * memory, and any committed catalogue change (through the stores, or written
 * by another connection such as a second replica or the admin CLI) is seen by
 * the very next read.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime, Option, Ref, Schema } from "effect"
import * as CachedPackageStore from "../../../layers/marketplace/cache/CachedPackageStore.js"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import * as SqlCatalogVersion from "../../../layers/marketplace/sql/SqlCatalogVersion.js"
import * as SqlCuration from "../../../layers/marketplace/sql/SqlCuration.js"
import * as SqlPackageStore from "../../../layers/marketplace/sql/SqlPackageStore.js"
import { ImportDocument } from "../../../schema/marketplace/Import.js"
import { publicStatuses } from "../../../schema/marketplace/Package.js"
import { CatalogImporter } from "../../../services/marketplace/CatalogImporter.js"
import { CurationStore } from "../../../services/marketplace/Curation.js"
import { type PackageQuery, PackageStore } from "../../../services/marketplace/PackageStore.js"
import { dialects, makeDatabase, type TestDatabase } from "../../support/Databases.js"

const document = Schema.decodeUnknownSync(ImportDocument)({
  packages: ["weather-map", "weather-radar", "notes"].map((name) => ({
    name,
    displayName: name,
    description: name === "notes" ? "quick notes" : `${name} for the weather`,
    curationStatus: "listed"
  }))
})

const search: PackageQuery = { terms: ["weather"], statuses: publicStatuses, ordering: "relevance", limit: 20 }
const namesOf = (slice: { readonly items: ReadonlyArray<{ readonly name: string }> }) =>
  slice.items.map((item) => item.name).sort()

describe.each(dialects)("cached package reads on %s", (dialect) => {
  let database: TestDatabase
  let runtime: ManagedRuntime.ManagedRuntime<PackageStore | CurationStore | CatalogImporter | SqlClient.SqlClient, never>
  /** Reads that reached the database. */
  const reads = Ref.unsafeMake(0)

  beforeAll(async () => {
    database = await makeDatabase(dialect, { migrated: true })
    const counted = Effect.map(SqlPackageStore.make, (store) =>
      PackageStore.of({
        ...store,
        find: (query) => Effect.zipRight(Ref.update(reads, (n) => n + 1), store.find(query)),
        detail: (name, statuses) => Effect.zipRight(Ref.update(reads, (n) => n + 1), store.detail(name, statuses))
      }))
    runtime = ManagedRuntime.make(
      Layer.mergeAll(
        CachedPackageStore.layer(counted).pipe(Layer.provide(SqlCatalogVersion.layer)),
        SqlCuration.layer,
        SqlCatalogImporter.layer
      ).pipe(Layer.provideMerge(Database.layer(database.parsed)))
    )
    await runtime.runPromise(Effect.flatMap(CatalogImporter, (importer) => importer.load(document)))
  })
  afterAll(async () => {
    await runtime.dispose()
    await database.drop()
  })

  const run = <A>(effect: Effect.Effect<A, never, PackageStore | CurationStore | SqlClient.SqlClient>) =>
    runtime.runPromise(effect)
  const find = () => run(Effect.flatMap(PackageStore, (store) => store.find(search)))
  const readCount = () => run(Ref.get(reads))

  it("answers a repeated read from memory", async () => {
    const first = await find()
    const before = await readCount()
    expect(await find()).toEqual(first)
    expect(await find()).toEqual(first)
    expect(await readCount()).toBe(before)
    expect(namesOf(first)).toEqual(["weather-map", "weather-radar"])
  })

  it("sees a curation change at the next read", async () => {
    await find()
    await run(Effect.flatMap(CurationStore, (curation) =>
      Effect.orDie(curation.setStatus({ name: "weather-radar", status: "hidden", actorId: "usr_test" }))))
    expect(namesOf(await find())).toEqual(["weather-map"])
    const detail = await run(Effect.flatMap(PackageStore, (store) => store.detail("weather-radar", publicStatuses)))
    expect(Option.isNone(detail)).toBe(true)
  })

  it("sees a change committed by another connection at the next read", async () => {
    await find()
    const before = await readCount()
    await Effect.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE packages SET curation_status = 'hidden' WHERE name = 'weather-map'`).pipe(
        Effect.provide(Database.layer(database.parsed)),
        Effect.orDie
      )
    )
    expect(namesOf(await find())).toEqual([])
    expect(await readCount()).toBe(before + 1)
  })

  it("keeps distinct reads apart", async () => {
    const other = await run(Effect.flatMap(PackageStore, (store) => store.find({ ...search, terms: ["notes"] })))
    expect(namesOf(other)).toEqual(["notes"])
    expect(namesOf(await find())).toEqual([])
  })
})
