/**
 * Registry signatures, checked the way npm's client checks them (pacote's `lib/registry.js`): the registry
 * signs `${name}@${version}:${dist.integrity}` with ECDSA P-256 over SHA-256; each signature names its key
 * by `keyid` among the keys the registry publishes at `/-/npm/v1/keys`. Every signature listed must verify
 * with a key that had not expired when the version was published.
 */
import { Effect, Option } from "effect"
import { createPublicKey, createVerify } from "node:crypto"
import { SignatureInvalid } from "../../services/registry/RegistryErrors.js"
import type { Chosen, RegistryKey } from "./Packument.js"

export const signedMessage = (name: string, version: string, integrity: string) => `${name}@${version}:${integrity}`

export const verifySignatures = (
  name: string,
  chosen: Chosen,
  integrity: string,
  keys: ReadonlyArray<RegistryKey>
) =>
  Effect.gen(function*() {
    const signatures = chosen.dist.signatures ?? []
    const invalid = (problem: string, keyid?: string) =>
      new SignatureInvalid({ name, version: chosen.version, problem, ...(keyid === undefined ? {} : { keyid }) })
    const message = signedMessage(name, chosen.version, integrity)
    for (const signature of signatures) {
      const key = keys.find((candidate) => candidate.keyid === signature.keyid)
      if (key === undefined) return yield* invalid("the registry publishes no key with this id", signature.keyid)
      if (key.expires !== undefined && key.expires !== null) {
        // Without a publish time the signature cannot be shown to predate the key's expiry.
        const expires = Date.parse(key.expires)
        const signedInTime = Option.match(chosen.published, { onNone: () => false, onSome: (at) => at.getTime() < expires })
        if (!signedInTime) return yield* invalid("the key expired before this version was published", signature.keyid)
      }
      const valid = yield* Effect.try({
        try: () => {
          const publicKey = createPublicKey({ key: Buffer.from(key.key, "base64"), format: "der", type: "spki" })
          return createVerify("SHA256").update(message).verify(publicKey, Buffer.from(signature.sig, "base64"))
        },
        catch: () => invalid("the key or the signature cannot be read", signature.keyid)
      })
      if (!valid) return yield* invalid("the signature does not verify", signature.keyid)
    }
    return signatures.length > 0 ? "verified" as const : "absent" as const
  })
