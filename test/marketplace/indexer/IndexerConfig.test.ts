/**
 * The indexer's settings as a replica reads them: defaults, the accepted forms and the refusals, each naming
 * the setting. `MARKETPLACE_SIGSTORE_TRUSTED_ROOT` swaps the trust root only (its passing and tampered bundles
 * run in SigstoreProvenance.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either, Option } from "effect"
import { IndexerConfig, trustedRootSetting } from "../../../layers/marketplace/indexer/RegistryIndexer.js"

const read = (settings: Record<string, string>) =>
  Effect.either(IndexerConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings))))))

describe("indexer settings", () => {
  it.effect("defaults: no registry, 2 workers, a re-check every 6 hours, Sigstore's own trust root", () =>
    Effect.gen(function*() {
      const options = Either.getOrThrow(yield* read({}))
      expect(Option.isNone(options.registryUrl)).toBe(true)
      expect(options.workers).toBe(2)
      expect(Option.map(options.recheckInterval, Duration.toMillis)).toEqual(Option.some(6 * 3_600_000))
      expect(options.verifyBundle).toBeUndefined()
    }))

  it.effect("a trusted-root file gives the indexer a verifier of its own", () =>
    Effect.gen(function*() {
      const options = Either.getOrThrow(yield* read({ [trustedRootSetting]: "/etc/clark/trusted_root.json" }))
      expect(typeof options.verifyBundle).toBe("function")
    }))

  const refused = [
    { settings: { MARKETPLACE_REGISTRY_URL: "ftp://registry.test" }, name: "MARKETPLACE_REGISTRY_URL" },
    { settings: { MARKETPLACE_INDEXER_WORKERS: "33" }, name: "MARKETPLACE_INDEXER_WORKERS" },
    { settings: { MARKETPLACE_INDEXER_RECHECK: "soon" }, name: "MARKETPLACE_INDEXER_RECHECK" },
    { settings: { [trustedRootSetting]: "" }, name: trustedRootSetting }
  ]
  for (const { name, settings } of refused) {
    it.effect(`refuses ${JSON.stringify(settings)}, naming ${name}`, () =>
      Effect.gen(function*() {
        const result = yield* read(settings)
        expect(Either.isLeft(result)).toBe(true)
        if (Either.isLeft(result)) expect(String(result.left)).toContain(name)
      }))
  }
})
