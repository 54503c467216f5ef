/** Prefixed random identifiers (`pg_…`, `rev_…`). */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"

export const makeId = (prefix: string): Effect.Effect<string> =>
  Effect.sync(() => `${prefix}_${randomBytes(12).toString("base64url")}`)
