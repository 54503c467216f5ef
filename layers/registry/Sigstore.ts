/**
 * Sigstore's verification of one bundle, with the trust material as an input.
 *
 * `sigstore.verify` (sigstore 4.1.1, `createVerifier`) always reads its trust root through TUF, so nothing
 * but Sigstore's own CA and logs could ever pass it. This module is the same steps on the same pinned
 * libraries (`@sigstore/tuf`'s getTrustedRoot, `@sigstore/verify`'s toTrustMaterial and Verifier,
 * `@sigstore/bundle`'s bundleFromJSON), in the same order, with the same default thresholds (one CT log
 * SCT, one transparency log entry, one timestamp), the same empty identity policy and the same key finder
 * for npm's publish attestation; only where the trusted root comes from is a parameter:
 * - the product: Sigstore's root through TUF (`tufTrustRoot`), read from the TUF cache or the root seeded
 *   in `@sigstore/tuf` (`forceCache`), as `sigstore.verify` read it;
 * - a deployment or test that names a trusted-root JSON file (`fileTrustRoot`, the node's
 *   `CC_SIGSTORE_TRUSTED_ROOT`): that root instead, e.g. one holding a test CA's and logs' keys.
 */
import { bundleFromJSON } from "@sigstore/bundle"
import { TrustedRoot } from "@sigstore/protobuf-specs"
import * as tuf from "@sigstore/tuf"
import { toSignedEntity, toTrustMaterial, Verifier } from "@sigstore/verify"
import { createPublicKey } from "node:crypto"
import * as fs from "node:fs/promises"
import type { VerifyBundle } from "./Provenance.js"

/** Where a verification's trusted root comes from; asked once per bundle (a TUF cache may be refreshed). */
export type TrustRoot = () => Promise<TrustedRoot>

/** Sigstore's trust root through TUF, with sigstore 4.1.1's defaults (2 retries, 5 s). */
export const tufTrustRoot = (tufCachePath: string | undefined): TrustRoot => () =>
  tuf.getTrustedRoot({
    ...(tufCachePath === undefined ? {} : { cachePath: tufCachePath }),
    forceCache: true,
    retry: { retries: 2 },
    timeout: 5_000
  })

/** The error name a configured trusted-root file that cannot be read or parsed fails with. */
export const trustedRootUnreadable = "TrustedRootUnreadable"

/**
 * A trusted root from a JSON file in Sigstore's `trusted_root.json` form. A file that cannot be read or is
 * not a trusted root refuses every bundle (unverifiable is not absent), under its own error name.
 */
export const fileTrustRoot = (file: string): TrustRoot => async () => {
  try {
    return TrustedRoot.fromJSON(JSON.parse(await fs.readFile(file, "utf8")))
  } catch (cause) {
    throw Object.assign(new Error("the configured Sigstore trusted root could not be read", { cause }), { name: trustedRootUnreadable })
  }
}

/** The key finder `sigstore.verify` builds from a `keySelector` that always answers `key` (PEM). */
const keyFinder = (key: string) => {
  const publicKey = createPublicKey(key)
  return () => ({ publicKey, validFor: () => true })
}

/**
 * Verifies a bundle (JSON form) against `trustRoot`; `key` is the registry key a publish attestation's
 * signature names. Throws `@sigstore/verify`'s VerificationError or PolicyError (or TUFError) on refusal.
 */
export const verifier = (trustRoot: TrustRoot): VerifyBundle => async (bundle, key) => {
  const root = await trustRoot()
  const material = toTrustMaterial(root, key === undefined ? undefined : keyFinder(key))
  const entity = toSignedEntity(bundleFromJSON(bundle))
  return new Verifier(material, {}).verify(entity, {})
}
