/**
 * The registry's documents as far as the node reads them: the packument (only the chosen version is
 * decoded, since a popular package lists thousands), its `dist`, and the registry's signing keys.
 */
import { Effect, Option, Schema } from "effect"
import { PackageNotInRegistry, RegistryUnavailable } from "../../services/registry/RegistryErrors.js"

export const Signature = Schema.Struct({ keyid: Schema.String, sig: Schema.String })

export const Dist = Schema.Struct({
  tarball: Schema.String,
  integrity: Schema.optional(Schema.String),
  signatures: Schema.optional(Schema.Array(Signature)),
  attestations: Schema.optional(Schema.Struct({ url: Schema.String }))
})
export type Dist = typeof Dist.Type

const VersionManifest = Schema.Struct({ name: Schema.String, version: Schema.String, dist: Dist })

const Packument = Schema.Struct({
  name: Schema.String,
  "dist-tags": Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  versions: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  time: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

export const RegistryKeys = Schema.Struct({
  keys: Schema.Array(Schema.Struct({
    keyid: Schema.String,
    key: Schema.String,
    expires: Schema.optional(Schema.NullOr(Schema.String))
  }))
})
export type RegistryKey = typeof RegistryKeys.Type["keys"][number]

/** What npm accepts as a package name (validate-npm-package-name's rules for new packages). */
const npmName = /^(?:@[a-z0-9-*~][a-z0-9-*._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/

export const isNpmName = (name: string) => name.length <= 214 && npmName.test(name)

/** The packument's path: a scoped name keeps its `@` and escapes its `/`, as npm's own client sends it. */
export const packumentPath = (name: string) => name.replace("/", "%2f")

export interface Chosen {
  readonly version: string
  readonly dist: Dist
  /** When the registry says this version was published (full packuments only). */
  readonly published: Option.Option<Date>
  /** Every version the packument lists, and its `latest` dist-tag (the indexer's re-check reads them). */
  readonly versions: ReadonlyArray<string>
  readonly latest: string | undefined
}

/** Picks `version`, or the `latest` dist-tag, out of a packument's bytes. */
export const choose = (name: string, version: string | undefined, body: Buffer) =>
  Effect.gen(function*() {
    const invalid = (problem: string) => new RegistryUnavailable({ name, stage: "packument", problem })
    const json = yield* Effect.try({ try: () => JSON.parse(body.toString("utf8")) as unknown, catch: () => invalid("packument is not JSON") })
    const packument = yield* Schema.decodeUnknown(Packument)(json).pipe(Effect.mapError(() => invalid("packument lacks its fields")))
    if (packument.name !== name) return yield* invalid("packument names another package")
    const wanted = version ?? packument["dist-tags"]?.latest
    if (wanted === undefined || !Object.hasOwn(packument.versions, wanted)) {
      return yield* new PackageNotInRegistry({ name, ...(wanted === undefined ? {} : { version: wanted }) })
    }
    const manifest = yield* Schema.decodeUnknown(VersionManifest)(packument.versions[wanted]).pipe(
      Effect.mapError(() => invalid(`version ${wanted} lacks its dist fields`))
    )
    if (manifest.name !== name || manifest.version !== wanted) return yield* invalid("version names another package")
    const time = packument.time?.[wanted]
    const published = typeof time === "string" && Number.isFinite(Date.parse(time)) ? Option.some(new Date(time)) : Option.none()
    return {
      version: wanted,
      dist: manifest.dist,
      published,
      versions: Object.keys(packument.versions),
      latest: packument["dist-tags"]?.latest
    } satisfies Chosen
  })
