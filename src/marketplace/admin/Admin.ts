/** Administration that works on the database directly: migrate, seed, import. */
import { Clock, Effect, Either, ParseResult, Schema } from "effect"
import { ImportDocument, ImportPackage } from "../../../schema/marketplace/Import.js"
import { CatalogImporter, type ImportCounts, ImportRejected } from "../../../services/marketplace/CatalogImporter.js"
import { demoCatalog } from "../seed/Demo.js"
import { syntheticPackages, syntheticTaxonomy } from "../seed/Synthetic.js"

const decodeOptions = { onExcessProperty: "error", errors: "all" } as const

/** Decodes an import document; the refusal names the first offending path. */
export const decodeDocument = (input: unknown): Either.Either<ImportDocument, ImportRejected> =>
  Schema.decodeUnknownEither(ImportDocument)(input, decodeOptions).pipe(
    Either.mapLeft((error) => {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
      const path = (issue?.path ?? []).map((key, i) =>
        typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`
      ).join("")
      return new ImportRejected({ path: path.length > 0 ? path : "(document)", message: issue?.message ?? error.message })
    })
  )

export const importDocument = (input: unknown) =>
  Effect.gen(function*() {
    const document = yield* Either.match(decodeDocument(input), { onLeft: Effect.fail, onRight: Effect.succeed })
    const importer = yield* CatalogImporter
    const counts = yield* importer.load(document)
    yield* importer.refreshStatistics
    return counts
  })

export const seedDemo: Effect.Effect<ImportCounts, ImportRejected, CatalogImporter> = Effect.gen(function*() {
  const now = new Date(yield* Clock.currentTimeMillis)
  return yield* importDocument(demoCatalog(now))
})

/** Seeds the demo catalogue unless the database already holds packages. */
export const seedDemoIfEmpty = Effect.gen(function*() {
  const importer = yield* CatalogImporter
  if (!(yield* importer.isEmpty)) return false
  yield* seedDemo
  return true
})

const decodePackages = Schema.decodeUnknownSync(Schema.Array(ImportPackage))

/** Writes `count` synthetic packages in chunks, reporting progress after each. */
export const seedSynthetic = (count: number, onProgress: (written: number) => Effect.Effect<void> = () => Effect.void) =>
  Effect.gen(function*() {
    const importer = yield* CatalogImporter
    const now = new Date(yield* Clock.currentTimeMillis)
    const taxonomy = syntheticTaxonomy()
    yield* importDocument({ ...taxonomy, packages: [] })
    const chunk = 2000
    let written = 0
    for (let start = 0; start < count; start += chunk) {
      const packages = decodePackages(syntheticPackages({ seed: 1, start, count: Math.min(chunk, count - start), now }))
      const result = yield* importer.loadPackages(packages, `synthetic[${start}]`)
      written += result.packages
      yield* onProgress(written)
    }
    yield* importer.refreshStatistics
    return written
  })
