/**
 * Synthetic marketplace packages for load and search tests.
 *
 * Pure and deterministic: every package is derived from `(seed, index)` alone, so a
 * caller can stream 1,000,000 packages in chunks of any size and get exactly what one
 * big call would give. Text comes from a fixed vocabulary drawn with a Zipf-like
 * distribution, so a few search terms match many packages and most match few.
 */
import type { ImportCategory, ImportDocumentInput, ImportPackage, ImportPublisher } from "../../../schema/marketplace/Import.js"

export type ImportPackageInput = typeof ImportPackage.Encoded
export type ImportCategoryInput = typeof ImportCategory.Encoded
export type ImportPublisherInput = typeof ImportPublisher.Encoded
export type ImportVersionInput = NonNullable<ImportPackageInput["versions"]>[number]

// ---------------------------------------------------------------------------
// Seeded randomness (shared with the demo catalogue)
// ---------------------------------------------------------------------------

export interface Rng {
  /** A uniform float in [0, 1). */
  readonly next: () => number
  /** A uniform unsigned 32-bit integer. */
  readonly uint32: () => number
  /** A uniform integer in [min, max], both inclusive. */
  readonly int: (min: number, max: number) => number
  readonly chance: (probability: number) => boolean
  readonly pick: <A>(items: ReadonlyArray<A>) => A
}

/** mulberry32: tiny, fast and good enough for test data; the same seed always gives the same stream. */
export const mulberry32 = (seed: number): Rng => {
  let state = seed >>> 0
  const uint32 = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
  const next = (): number => uint32() / 4294967296
  return {
    next,
    uint32,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    pick: <A>(items: ReadonlyArray<A>): A => {
      if (items.length === 0) throw new Error("pick from an empty list")
      return items[Math.floor(next() * items.length)] as A
    }
  }
}

/**
 * Mixes two integers into a well-spread 32-bit seed (murmur3 finaliser), so that
 * neighbouring indexes do not produce correlated streams.
 */
export const mixSeed = (a: number, b: number): number => {
  let h = Math.imul(a ^ 0x85ebca6b, 0xcc9e2d51) ^ Math.imul(b + 0x27d4eb2f, 0x9e3779b1)
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/**
 * An npm-style `sha512-<base64>` integrity string over 64 bytes from `rng`. Written by hand
 * (rather than with Buffer) to keep the module free of platform APIs.
 */
export const fakeIntegrity = (rng: Rng): string => {
  const bytes = new Uint8Array(64)
  for (let i = 0; i < 64; i += 4) {
    const word = rng.uint32()
    bytes[i] = word & 0xff
    bytes[i + 1] = (word >>> 8) & 0xff
    bytes[i + 2] = (word >>> 16) & 0xff
    bytes[i + 3] = word >>> 24
  }
  let out = "sha512-"
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0)
    out += base64Alphabet.charAt(n >>> 18) + base64Alphabet.charAt((n >>> 12) & 63) +
      base64Alphabet.charAt((n >>> 6) & 63) + base64Alphabet.charAt(n & 63)
  }
  // 64 = 21 * 3 + 1: one byte left over, encoded as two characters and "==".
  const last = (bytes[i] ?? 0) << 16
  return out + base64Alphabet.charAt(last >>> 18) + base64Alphabet.charAt((last >>> 12) & 63) + "=="
}

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
  // Zipf-like weights 1 / rank^1.05.
  const cumulative = new Float64Array(words.length)
  let total = 0
  for (let rank = 0; rank < words.length; rank++) {
    total += 1 / Math.pow(rank + 1, 1.05)
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
const publisherSlug = (n: number): string => `pub-${n}`

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

const kinds: ReadonlyArray<readonly [kind: string, isolation: string, renderer: string | null, entry: string]> = [
  ["widget", "isolated-ui", "html", "dist/widget.html"],
  ["tool", "trusted-native", null, "dist/cli.js"],
  ["service", "service", null, "dist/service.js"],
  ["skill", "declarative", null, "skill.md"],
  ["theme", "declarative", null, "theme.json"]
]
const platformSets: ReadonlyArray<ReadonlyArray<string>> = [
  ["web"], ["darwin"], ["linux"], ["darwin", "linux"], ["win32", "web"], ["ios", "android"], ["linux", "win32"]
]
const permissions: ReadonlyArray<{ readonly kind: "capability" | "network" | "filesystem" | "lifecycle"; readonly value: string; readonly access: string | null }> = [
  { kind: "network", value: "api.example.com", access: null },
  { kind: "filesystem", value: "read:~/Documents", access: "read" },
  { kind: "capability", value: "notifications", access: null },
  { kind: "lifecycle", value: "background", access: null }
]
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
  const out = new Array<ImportPackageInput>(options.count)
  for (let k = 0; k < options.count; k++) {
    out[k] = syntheticPackage(vocab, options.seed, options.start + k, nowMs)
  }
  return out
}

const syntheticPackage = (vocab: Vocabulary, seed: number, index: number, nowMs: number): ImportPackageInput => {
  const rng = mulberry32(mixSeed(seed, index))
  const word = () => zipfWord(vocab, rng)
  const first = word()
  const second = word()
  const publisher = rng.int(0, publisherCount - 1)
  // The base-36 index makes every name unique whatever words were drawn.
  const base = `synth-${first}-${second}-${index.toString(36)}`
  const name = index % 7 === 0 ? `@${publisherSlug(publisher)}/${base}` : base

  const length = rng.int(5, 10)
  const words: Array<string> = []
  for (let w = 0; w < length; w++) words.push(word())
  // Connectives make the text read like a sentence without adding search noise.
  const description = `${capitalize(words.slice(0, 3).join(" "))} for ${words.slice(3, -1).join(" ")} and ${words[words.length - 1]}.`

  const keywordCount = rng.int(2, 4)
  const keywords = new Set<string>()
  for (let w = 0; w < keywordCount; w++) keywords.add(word())

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

  const versions = syntheticVersions(rng, base, nowMs)
  return {
    name,
    displayName: `${capitalize(first)} ${capitalize(second)}`,
    description,
    publisher: publisherSlug(publisher),
    categorySlug: (categoryNames[index % categoryNames.length] as readonly [string, string])[0],
    curationStatus,
    keywords: [...keywords],
    homepage: rng.chance(0.7) ? `https://${publisherSlug(publisher)}.example/${base}` : null,
    repositoryUrl: `https://git.example/${publisherSlug(publisher)}/${base}`,
    license: rng.pick(licenses),
    updatedAt: (versions[versions.length - 1] as ImportVersionInput).indexedAt,
    versions
  }
}

/** 1-3 light versions at increasing dates within the three years before `nowMs`. */
const syntheticVersions = (rng: Rng, base: string, nowMs: number): Array<ImportVersionInput> => {
  const count = rng.int(1, 3)
  const [kind, isolation, renderer, entry] = rng.pick(kinds)
  const platforms = rng.pick(platformSets)
  const permission = rng.pick(permissions)
  let at = nowMs - rng.int(30, 3 * 365) * dayMs
  const versions = new Array<ImportVersionInput>(count)
  for (let v = 0; v < count; v++) {
    const publishedAt = new Date(at).toISOString()
    versions[v] = {
      version: `1.${v}.${rng.int(0, 4)}`,
      publishedAt,
      indexedAt: new Date(at + rng.int(1, 30) * 60_000).toISOString(),
      registryIntegrity: fakeIntegrity(rng),
      tarballSha512Verified: true,
      hasProvenance: rng.chance(0.4),
      readmeHtml: null,
      platforms: [...platforms],
      facets: [{ kind, isolation, renderer, entry, widgetId: kind === "widget" ? base : null }],
      permissions: [{ ...permission }],
      previews: [],
      securityChecks: [{ check: "integrity", result: "pass" }]
    }
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
