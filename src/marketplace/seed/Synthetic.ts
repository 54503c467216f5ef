/**
 * Synthetic marketplace packages for load and search tests.
 *
 * Pure and deterministic: every package is derived from `(seed, index)` alone, so a
 * caller can stream 1,000,000 packages in chunks of any size and get exactly what one
 * big call would give. Text comes from a fixed vocabulary drawn with a Zipf-like
 * distribution, so a few search terms match many packages and most match few.
 */
import type { ImportCategory, ImportDocumentInput, ImportPackage, ImportPublisher } from "../../../schema/marketplace/Import.js"
import { fakeIntegrity, mixSeed, mulberry32, Rng } from "./Random.js"

export type ImportPackageInput = typeof ImportPackage.Encoded
export type ImportCategoryInput = typeof ImportCategory.Encoded
export type ImportPublisherInput = typeof ImportPublisher.Encoded
export type ImportVersionInput = NonNullable<ImportPackageInput["versions"]>[number]

// Seeded randomness lives in Random.ts (shared with the demo catalogue).
export { fakeIntegrity, mixSeed, mulberry32, Rng } from "./Random.js"

// ---------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------

/** Real words, so that hand-typed searches against a synthetic catalogue find something. */
const realWords: ReadonlyArray<string> = [
  "calendar", "markdown", "weather", "invoice", "map", "notes", "todo", "timer", "budget", "chart",
  "photo", "music", "podcast", "video", "editor", "terminal", "git", "docker", "json", "csv",
  "pdf", "email", "chat", "translate", "dictionary", "recipe", "fitness", "sleep", "habit", "journal",
  "kanban", "pomodoro", "clock", "alarm", "reminder", "bookmark", "clipboard", "screenshot", "color", "font",
  "icon", "theme", "dark", "light", "sync", "backup", "share", "search", "tag", "filter",
  "export", "import", "print", "scan", "camera", "microphone", "voice", "speech", "transcript", "subtitle",
  "playlist", "radio", "stream", "stock", "crypto", "tax", "expense", "receipt", "bank", "payment",
  "wallet", "thermostat", "lamp", "sensor", "door", "garden", "energy", "solar", "battery", "network",
  "wifi", "password", "privacy", "cloud", "server", "database", "api", "webhook", "log", "metric",
  "monitor", "alert", "deploy", "build", "lint", "diagram", "outline", "citation", "paper", "library",
  "book", "news", "feed", "travel", "flight", "transit", "bike", "trail", "route", "city"
]

const onsets = ["b", "br", "c", "ch", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "kl", "l", "m", "n", "p", "pl", "qu", "r", "s", "sh", "st", "t", "tr", "v", "w", "z"]
const nuclei = ["a", "e", "i", "o", "u", "ai", "ea", "io", "oo", "y"]
const codas = ["", "", "", "n", "r", "l", "s", "x", "m", "nd", "st", "k"]

/** Number of generated pseudo-words; with the real words this makes ~2,100 terms. */
const pseudoWordCount = 2000

interface Vocabulary {
  readonly words: ReadonlyArray<string>
  /** Cumulative Zipf weights, one per word, for binary-search sampling. */
  readonly cumulative: Float64Array
  readonly total: number
}

let vocabularyCache: Vocabulary | undefined

/**
 * Built once from a fixed seed, independent of the caller's seed: the vocabulary is part
 * of the data set's definition, and two seeds should still search the same language.
 */
const vocabulary = (): Vocabulary => {
  if (vocabularyCache !== undefined) return vocabularyCache
  const rng = mulberry32(0x5eed_0001)
  const seen = new Set<string>(realWords)
  const words: Array<string> = [...realWords]
  while (seen.size < realWords.length + pseudoWordCount) {
    let word = ""
    const syllables = rng.int(2, 3)
    for (let s = 0; s < syllables; s++) word += rng.pick(onsets) + rng.pick(nuclei)
    word += rng.pick(codas)
    if (seen.has(word)) continue
    seen.add(word)
    words.push(word)
  }
  // Shuffle so real words land at random ranks: some become common, most stay rare.
  for (let i = words.length - 1; i > 0; i--) {
    const j = rng.int(0, i)
    const tmp = words[i] as string
    words[i] = words[j] as string
    words[j] = tmp
  }
  // Zipf-Mandelbrot weights 1 / (rank + 30)^1.05: the offset keeps the most common word in
  // about one package in eight, as in a real catalogue, instead of in nearly all of them.
  const cumulative = new Float64Array(words.length)
  let total = 0
  for (let rank = 0; rank < words.length; rank++) {
    total += 1 / Math.pow(rank + 30, 1.05)
    cumulative[rank] = total
  }
  vocabularyCache = { words, cumulative, total }
  return vocabularyCache
}

const zipfWord = (vocab: Vocabulary, rng: Rng): string => {
  const target = rng.next() * vocab.total
  let lo = 0
  let hi = vocab.cumulative.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((vocab.cumulative[mid] ?? 0) < target) lo = mid + 1
    else hi = mid
  }
  return vocab.words[lo] as string
}

const capitalize = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1)

// ---------------------------------------------------------------------------
// Taxonomy
// ---------------------------------------------------------------------------

const categoryNames: ReadonlyArray<readonly [slug: string, name: string]> = [
  ["productivity", "Productivity"],
  ["developer-tools", "Developer tools"],
  ["maps-and-places", "Maps and places"],
  ["media", "Media"],
  ["writing", "Writing"],
  ["finance", "Finance"],
  ["home-automation", "Home automation"],
  ["research", "Research"],
  ["communication", "Communication"],
  ["themes", "Themes"],
  ["education", "Education"],
  ["health", "Health"]
]

const publisherCount = 200

/** Synthetic publishers are `pub-0` .. `pub-199`; every tenth one is verified. */
const publisherSlugs: ReadonlyArray<string> = Array.from({ length: publisherCount }, (_, n) => `pub-${n}`)
const publisherSlug = (n: number): string => publisherSlugs[n] ?? `pub-${n}`

export const syntheticTaxonomy = (): {
  readonly categories: Array<ImportCategoryInput>
  readonly publishers: Array<ImportPublisherInput>
} => ({
  categories: categoryNames.map(([slug, name], position) => ({
    slug,
    name,
    description: `Synthetic ${name.toLowerCase()} packages.`,
    position
  })),
  publishers: Array.from({ length: publisherCount }, (_, n) => ({
    slug: publisherSlug(n),
    name: `Publisher ${n}`,
    verified: n % 10 === 0
  }))
})

// ---------------------------------------------------------------------------
// Packages
// ---------------------------------------------------------------------------

// The per-version parts below are built once and shared by every synthetic package:
// a million packages with private copies would spend most of their time in the garbage
// collector. They are readonly in the import types, so nobody downstream mutates them.
type FacetInput = NonNullable<ImportVersionInput["facets"]>[number]
type PermissionInput = NonNullable<ImportVersionInput["permissions"]>[number]
type SecurityCheckInput = NonNullable<ImportVersionInput["securityChecks"]>[number]

const facetSets: ReadonlyArray<ReadonlyArray<FacetInput>> = [
  [{ kind: "widget", isolation: "isolated-ui", renderer: "html", entry: "dist/widget.html", widgetId: "main" }],
  [{ kind: "tool", isolation: "trusted-native", renderer: null, entry: "dist/cli.js", widgetId: null }],
  [{ kind: "service", isolation: "service", renderer: null, entry: "dist/service.js", widgetId: null }],
  [{ kind: "skill", isolation: "declarative", renderer: null, entry: "skill.md", widgetId: null }],
  [{ kind: "theme", isolation: "declarative", renderer: null, entry: "theme.json", widgetId: null }]
]
const platformSets: ReadonlyArray<ReadonlyArray<string>> = [
  ["web"], ["darwin"], ["linux"], ["darwin", "linux"], ["win32", "web"], ["ios", "android"], ["linux", "win32"]
]
const permissionSets: ReadonlyArray<ReadonlyArray<PermissionInput>> = [
  [{ kind: "network", value: "api.example.com", access: null }],
  [{ kind: "filesystem", value: "read:~/Documents", access: "read" }],
  [{ kind: "capability", value: "notifications", access: null }],
  [{ kind: "lifecycle", value: "background", access: null }]
]
const integrityChecks: ReadonlyArray<SecurityCheckInput> = [{ check: "integrity", result: "pass" }]
const noPreviews: ReadonlyArray<never> = []
const licenses = ["MIT", "MIT", "Apache-2.0", "ISC", "BSD-3-Clause", "MPL-2.0"]

const dayMs = 86_400_000

export interface SyntheticOptions {
  readonly seed: number
  /** Index of the first package; names embed the index, so chunks never collide. */
  readonly start: number
  readonly count: number
  /** Every date is before this instant. */
  readonly now: Date
}

/** Packages number `start` .. `start + count - 1`, each a pure function of `(seed, index)`. */
export const syntheticPackages = (options: SyntheticOptions): Array<ImportPackageInput> => {
  const vocab = vocabulary()
  const nowMs = options.now.getTime()
  const out: Array<ImportPackageInput> = []
  for (let k = 0; k < options.count; k++) out.push(syntheticPackage(vocab, options.seed, options.start + k, nowMs))
  return out
}

const syntheticPackage = (vocab: Vocabulary, seed: number, index: number, nowMs: number): ImportPackageInput => {
  const rng = new Rng(mixSeed(seed, index))
  const first = zipfWord(vocab, rng)
  const second = zipfWord(vocab, rng)
  const publisher = rng.int(0, publisherCount - 1)
  // The base-36 index makes every name unique whatever words were drawn.
  const base = `synth-${first}-${second}-${index.toString(36)}`
  const name = index % 7 === 0 ? `@${publisherSlug(publisher)}/${base}` : base

  // "<Three words> for <some words> and <word>.": the connectives make it read like a
  // sentence without adding search noise. One `join` gives a flat string, where template
  // concatenation would leave ropes for the garbage collector.
  const length = rng.int(5, 10)
  const words: Array<string> = [capitalize(zipfWord(vocab, rng))]
  for (let w = 1; w < length; w++) {
    if (w === 3) words.push("for")
    if (w === length - 1) words.push("and")
    words.push(zipfWord(vocab, rng))
  }
  words[words.length - 1] += "."
  const description = words.join(" ")

  const keywordCount = rng.int(2, 4)
  const keywords: Array<string> = []
  for (let w = 0; w < keywordCount; w++) {
    const keyword = zipfWord(vocab, rng)
    if (!keywords.includes(keyword)) keywords.push(keyword)
  }

  const roll = rng.next()
  const curationStatus = roll < 0.85
    ? "listed" as const
    : roll < 0.90
    ? "featured" as const
    : roll < 0.94
    ? "unreviewed" as const
    : roll < 0.97
    ? "hidden" as const
    : "rejected" as const

  const versions = syntheticVersions(rng, nowMs)
  return {
    name,
    displayName: `${capitalize(first)} ${capitalize(second)}`,
    description,
    publisher: publisherSlug(publisher),
    categorySlug: (categoryNames[index % categoryNames.length] as readonly [string, string])[0],
    curationStatus,
    keywords,
    homepage: rng.chance(0.7) ? `https://${publisherSlug(publisher)}.example/${base}` : null,
    repositoryUrl: `https://git.example/${publisherSlug(publisher)}/${base}`,
    license: rng.pick(licenses),
    updatedAt: (versions[versions.length - 1] as ImportVersionInput).indexedAt,
    versions
  }
}

const minuteMs = 60_000

/** "YYYY-MM-DDT" by day number and "HH:MM:00.000Z" by minute of day, filled on demand. */
const dayPrefixes = new Map<number, string>()
const minuteSuffixes: Array<string> = []

/**
 * `new Date(ms).toISOString()` truncated to the minute. Date formatting was the single
 * biggest cost of a large run, and synthetic releases only need minute precision, so
 * the string is glued from two cached halves instead.
 */
const isoMinute = (ms: number): string => {
  const day = Math.floor(ms / dayMs)
  let prefix = dayPrefixes.get(day)
  if (prefix === undefined) {
    prefix = new Date(day * dayMs).toISOString().slice(0, 11)
    // Bounded: a run touches a few years of days; long-lived callers with moving `now` reset it.
    if (dayPrefixes.size > 20_000) dayPrefixes.clear()
    dayPrefixes.set(day, prefix)
  }
  const minute = Math.floor((ms - day * dayMs) / minuteMs)
  let suffix = minuteSuffixes[minute]
  if (suffix === undefined) {
    suffix = new Date(minute * minuteMs).toISOString().slice(11)
    minuteSuffixes[minute] = suffix
  }
  return prefix + suffix
}

/** 1-3 light versions at increasing dates within the three years before `nowMs`. */
const syntheticVersions = (rng: Rng, nowMs: number): Array<ImportVersionInput> => {
  const count = rng.int(1, 3)
  const facets = rng.pick(facetSets)
  const platforms = rng.pick(platformSets)
  const permissions = rng.pick(permissionSets)
  let at = nowMs - rng.int(30, 3 * 365) * dayMs
  const versions: Array<ImportVersionInput> = []
  for (let v = 0; v < count; v++) {
    versions.push({
      version: `1.${v}.${rng.int(0, 4)}`,
      publishedAt: isoMinute(at),
      indexedAt: isoMinute(at + rng.int(1, 30) * minuteMs),
      registryIntegrity: fakeIntegrity(rng),
      tarballSha512Verified: true,
      hasProvenance: rng.chance(0.4),
      readmeHtml: null,
      platforms,
      facets,
      permissions,
      previews: noPreviews,
      securityChecks: integrityChecks
    })
    // The next release comes at least an hour (so after this one is indexed) and at most a
    // tenth of the remaining time later, so it never reaches `now`.
    at += Math.max(3_600_000, Math.floor((nowMs - at) * rng.next() * 0.1))
  }
  return versions
}

/** A whole synthetic document (taxonomy and one chunk), handy for a single import. */
export const syntheticDocument = (options: SyntheticOptions): ImportDocumentInput => ({
  ...syntheticTaxonomy(),
  packages: syntheticPackages(options)
})
