/** Curator commands on packages. */
import { Schema } from "effect"
import { CurationStatus } from "./Package.js"

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)))
})

export const SetStatusRequest = Schema.Struct({
  status: CurationStatus,
  reason: Schema.optional(Schema.String.pipe(Schema.maxLength(500)))
})

export const SetFeaturedRequest = Schema.Struct({ featured: Schema.Boolean })

export const CurationResult = Schema.Struct({ name: Schema.String, curationStatus: CurationStatus }).annotations({
  identifier: "CurationResult"
})
export type CurationResult = typeof CurationResult.Type
