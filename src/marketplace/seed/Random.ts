/** Seeded randomness for test and demo data: a small PRNG, seed mixing and integrity-shaped strings. */
/**
 * mulberry32: tiny, fast and good enough for test data; the same seed always gives the
 * same stream. A class rather than closures because a million packages means a million
 * generators, and prototype methods cost nothing to create.
 */
export class Rng {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0
  }

  /** A uniform unsigned 32-bit integer. */
  uint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }

  /** A uniform float in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296
  }

  /** A uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  chance(probability: number): boolean {
    return this.next() < probability
  }

  pick<A>(items: ReadonlyArray<A>): A {
    if (items.length === 0) throw new Error("pick from an empty list")
    return items[Math.floor(this.next() * items.length)] as A
  }
}

export const mulberry32 = (seed: number): Rng => new Rng(seed)

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

const base64Codes = Array.from(base64Alphabet, (c) => c.charCodeAt(0))
/** "sha512-", 88 base64 characters ending in "=="; scratch space, safe because generation is synchronous. */
const integrityCodes: Array<number> = Array.from("sha512-" + "A".repeat(86) + "==", (c) => c.charCodeAt(0))

/**
 * An npm-style `sha512-<base64>` integrity string over 64 bytes from `rng`. Written by hand
 * (rather than with Buffer) to keep the module free of platform APIs, and built from char
 * codes in one call: appending 88 characters one by one leaves rope strings behind, and
 * collecting those dominated the time of large synthetic runs.
 */
export const fakeIntegrity = (rng: Rng): string => {
  const codes = integrityCodes
  let out = 7
  // 64 bytes = 21 groups of three bytes (four characters each) + one byte.
  for (let group = 0; group < 21; group++) {
    const n = rng.uint32() >>> 8
    codes[out++] = base64Codes[n >>> 18] as number
    codes[out++] = base64Codes[(n >>> 12) & 63] as number
    codes[out++] = base64Codes[(n >>> 6) & 63] as number
    codes[out++] = base64Codes[n & 63] as number
  }
  // The last byte is two characters (the second zero-padded), then the fixed "==".
  const last = rng.uint32() & 0xff
  codes[out++] = base64Codes[last >>> 2] as number
  codes[out] = base64Codes[(last & 3) << 4] as number
  return String.fromCharCode.apply(null, codes)
}
