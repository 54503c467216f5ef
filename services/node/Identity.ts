/** Who this node is, and the secrets that tell its callers apart. */
import { Context, type Redacted } from "effect"

export interface Identity {
  readonly nodeId: string
  readonly label: string
  /** SHA-256 fingerprint of the node's Ed25519 public key. */
  readonly fingerprint: string
  /** Any holder of it may use the REST API as the cli-api surface. */
  readonly localToken: Redacted.Redacted<string>
  /** Known only to the host app's pages: together with the token it marks the person surface. */
  readonly appSecret: Redacted.Redacted<string>
}

export class NodeIdentity extends Context.Tag("clark/node/NodeIdentity")<NodeIdentity, Identity>() {}
