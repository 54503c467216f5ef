/**
 * The node's identity in its data dir: `identity.json` (mode 0600) with the node
 * id, label, fingerprint of an Ed25519 public key and the local token, created
 * at first start together with the key pair.
 */
import { Effect, Layer, Redacted, Schema } from "effect"
import { createHash, generateKeyPairSync, randomBytes, randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Identity, NodeIdentity } from "../../../services/node/Identity.js"

const IdentityFile = Schema.Struct({
  nodeId: Schema.String,
  label: Schema.String,
  fingerprint: Schema.String,
  localToken: Schema.String
})
type IdentityFile = typeof IdentityFile.Type

export const identityFile = (dataDir: string) => path.join(dataDir, "identity.json")

const create = (dataDir: string): IdentityFile => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519")
  const der = publicKey.export({ type: "spki", format: "der" })
  fs.writeFileSync(path.join(dataDir, "node-key.pem"), privateKey.export({ type: "pkcs8", format: "pem" }), {
    mode: 0o600
  })
  const identity: IdentityFile = {
    nodeId: `node_${randomUUID().replaceAll("-", "")}`,
    label: `Clark on ${os.hostname()}`,
    fingerprint: `SHA256:${createHash("sha256").update(der).digest("base64")}`,
    localToken: randomBytes(32).toString("base64url")
  }
  // Written to a temporary name first, so a crash never leaves half a file.
  const file = identityFile(dataDir)
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(identity, null, 2) + "\n", { mode: 0o600 })
  fs.renameSync(`${file}.tmp`, file)
  return identity
}

/** Reads the identity of the data dir, creating the dir and the identity on first start. */
export const loadOrCreate = (dataDir: string) =>
  Effect.sync(() => {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    const file = identityFile(dataDir)
    if (!fs.existsSync(file)) return { identity: create(dataDir), created: true }
    fs.chmodSync(file, 0o600)
    const identity = Schema.decodeUnknownSync(IdentityFile)(JSON.parse(fs.readFileSync(file, "utf8")))
    return { identity, created: false }
  })

export const layer = (dataDir: string, appSecret: Redacted.Redacted<string>) =>
  Layer.effect(
    NodeIdentity,
    Effect.map(loadOrCreate(dataDir), ({ identity }): Identity => ({
      nodeId: identity.nodeId,
      label: identity.label,
      fingerprint: identity.fingerprint,
      localToken: Redacted.make(identity.localToken),
      appSecret
    }))
  )

/** A fresh app secret for a launch that did not set CC_APP_SECRET. */
export const generateAppSecret = () => Redacted.make(randomBytes(32).toString("base64url"))
