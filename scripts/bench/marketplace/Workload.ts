/**
 * The workload: scenarios whose queries are drawn from the synthetic catalogue itself (regenerated, it is a pure
 * function of seed and index), so they match.
 */
import { syntheticPackages, syntheticTaxonomy } from "../../../src/marketplace/seed/Synthetic.js"
import { spread } from "./Settings.js"

type Route = "search" | "packages" | "detail"

export interface Scenario {
  readonly id: string
  readonly title: string
  readonly route: Route
  /** Request paths autocannon rotates through. */
  readonly paths: ReadonlyArray<string>
}

const wordsOf = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)

/** Connectives the generator writes into every description; not vocabulary. */
const connectives = new Set(["for", "and"])

/**
 * Regenerates the catalogue the seeder writes (it is a pure function of seed and index) and
 * counts, for every vocabulary word, how many public packages contain it.
 */
export const surveyCatalogue = (count: number) => {
  const frequency = new Map<string, number>()
  const names: Array<string> = []
  const samples: Array<ReadonlyArray<string>> = []
  const kinds = new Set<string>()
  const platforms = new Set<string>()
  const chunk = 2000
  for (let start = 0; start < count; start += chunk) {
    const packages = syntheticPackages({ seed: 1, start, count: Math.min(chunk, count - start), now: new Date() })
    for (const pkg of packages) {
      if (pkg.curationStatus !== "listed" && pkg.curationStatus !== "featured") continue
      const words = new Set(
        wordsOf(`${pkg.displayName} ${(pkg.keywords ?? []).join(" ")} ${pkg.description}`).filter((w) => !connectives.has(w))
      )
      for (const word of words) frequency.set(word, (frequency.get(word) ?? 0) + 1)
      if (names.length % 97 === 0) samples.push([...words])
      names.push(pkg.name)
      const latest = pkg.versions?.[pkg.versions.length - 1]
      for (const facet of latest?.facets ?? []) kinds.add(facet.kind)
      for (const platform of latest?.platforms ?? []) platforms.add(platform)
    }
  }
  return { frequency, names, samples, kinds: [...kinds].sort(), platforms: [...platforms].sort() }
}

const queriesPerShape = 5

export const buildScenarios = (survey: ReturnType<typeof surveyCatalogue>): Array<Scenario> => {
  const df = (word: string) => survey.frequency.get(word) ?? 0
  const byFrequency = [...survey.frequency.keys()].sort((a, b) => df(b) - df(a) || (a < b ? -1 : 1))
  const isPrefixOfAnother = (word: string) => byFrequency.some((other) => other !== word && other.startsWith(word))

  const common = byFrequency.slice(0, queriesPerShape)
  // Rare: among the least frequent words (words that prefix another word would match more).
  const rare = spread(
    byFrequency.filter((w) => !isPrefixOfAnother(w)).reverse().slice(0, queriesPerShape * 4),
    queriesPerShape
  )
  // Two words: the two most frequent words of sampled packages, so each pair matches at least one.
  const pairs = [
    ...new Set(
      survey.samples
        .map((words) => [...words].sort((a, b) => df(b) - df(a) || (a < b ? -1 : 1)).slice(0, 2))
        .filter((pair) => pair.length === 2)
        .map((pair) => pair.join(" "))
    )
  ]
  const twoWords = spread(pairs, queriesPerShape)
  const prefixes = [...new Set(byFrequency.filter((w) => w.length >= 5).map((w) => w.slice(0, 3)))].slice(0, queriesPerShape)

  for (const [shape, list] of Object.entries({ common, rare, twoWords, prefixes })) {
    if (list.length === 0) throw new Error(`no ${shape} search terms in a catalogue of ${survey.names.length} public packages`)
  }

  const search = (q: string) => `/api/v1/search?q=${encodeURIComponent(q)}`
  const categories = syntheticTaxonomy().categories.map((c) => c.slug)
  const combos = Array.from({ length: 6 }, (_, i) => [categories[(i * 5) % categories.length]!, survey.kinds[i % survey.kinds.length]!])

  return [
    { id: "search-common", title: "search: a common word", route: "search", paths: common.map(search) },
    { id: "search-rare", title: "search: a rare word", route: "search", paths: rare.map(search) },
    { id: "search-two", title: "search: two words", route: "search", paths: twoWords.map(search) },
    { id: "search-prefix", title: "search: 3-letter prefix", route: "search", paths: prefixes.map(search) },
    {
      id: "list-category-kind",
      title: "packages: category + kind",
      route: "packages",
      paths: combos.map(([category, kind]) => `/api/v1/packages?category=${category}&kind=${kind}`)
    },
    {
      id: "list-platform-name",
      title: "packages: platform, sort=name",
      route: "packages",
      paths: survey.platforms.map((platform) => `/api/v1/packages?platform=${platform}&sort=name`)
    },
    {
      id: "detail",
      title: "package detail",
      route: "detail",
      paths: spread(survey.names, 500).map((name) => `/api/v1/packages/${encodeURIComponent(name)}`)
    }
  ]
}

export const searchParamsOf = (requestPath: string) => new URL(requestPath, "http://bench.invalid").searchParams
export const detailNameOf = (requestPath: string) => decodeURIComponent(requestPath.slice("/api/v1/packages/".length))
