/** Prefixed random identifiers (`pg_…`, `rev_…`). */
import { Effect } from "effect"
import { randomFillSync } from "node:crypto"

const idBytes = 12
/**
 * The system's generator is asked for 4 KiB at a time (341 ids) rather than 12 bytes per id: each call into it
 * costs about as much as the 4 KiB, and a turn's start takes three ids. The bytes are the same CSPRNG output and
 * each is used once.
 */
const pool = Buffer.alloc(idBytes * 341)
let offset = pool.length

const randomPart = (): string => {
  if (offset + idBytes > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const text = pool.toString("base64url", offset, offset + idBytes)
  offset += idBytes
  return text
}

export const makeId = (prefix: string): Effect.Effect<string> => Effect.sync(() => `${prefix}_${randomPart()}`)
