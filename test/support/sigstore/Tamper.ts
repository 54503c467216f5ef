/**
 * Ways a real bundle (JSON form) is altered after signing, each of which Sigstore must refuse. Each returns a
 * changed copy; the bundle given is left as it was.
 */
type Json = any

const copy = (bundle: object): Json => structuredClone(bundle)

/** The DSSE payload replaced by another statement (e.g. one naming other bytes), the signature kept. */
export const rewriteStatement = (bundle: object, statement: object): object => {
  const changed = copy(bundle)
  changed.dsseEnvelope.payload = Buffer.from(JSON.stringify(statement)).toString("base64")
  return changed
}

/** One bit of the DSSE signature flipped. */
export const flipSignature = (bundle: object): object => {
  const changed = copy(bundle)
  const sig = Buffer.from(changed.dsseEnvelope.signatures[0].sig, "base64")
  const at = sig.length >> 1
  sig.writeUInt8(sig.readUInt8(at) ^ 0x01, at)
  changed.dsseEnvelope.signatures[0].sig = sig.toString("base64")
  return changed
}

/** The transparency log's signed entry timestamp (inclusion promise) removed from every entry. */
export const withoutSET = (bundle: object): object => {
  const changed = copy(bundle)
  for (const entry of changed.verificationMaterial.tlogEntries) delete entry.inclusionPromise
  return changed
}
