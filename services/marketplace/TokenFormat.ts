/**
 * The shape of marketplace tokens: `<prefix><body><checksum>` where the prefix
 * is `cmk_` (personal API token), `cmo_` (OAuth access token) or `cms_`
 * (session token), the body is 32
 * random base62 characters and the checksum is 6 base62 characters derived
 * from prefix and body. A token whose checksum does not match (a typo, a
 * truncated paste) is rejected without any lookup. Tokens are stored only as
 * SHA-256 hex hashes. Nothing here logs or echoes a token.
 */
import { createHash, randomBytes } from "node:crypto"

export type TokenKind = "api-token" | "oauth" | "session"

export const prefixes: Record<TokenKind, string> = { "api-token": "cmk_", oauth: "cmo_", session: "cms_" }

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
export const bodyLength = 32
export const checksumLength = 6
const base62 = /^[0-9A-Za-z]+$/

/** Six base62 characters from the first 32 bits of SHA-256(prefix + body); 62^6 > 2^32. */
export const checksum = (prefixAndBody: string): string => {
  let value = createHash("sha256").update(prefixAndBody, "utf8").digest().readUInt32BE(0)
  let out = ""
  for (let i = 0; i < checksumLength; i++) {
    out = alphabet[value % 62] + out
    value = Math.floor(value / 62)
  }
  return out
}

/** A token of the given kind around a body of base62 characters. */
export const format = (kind: TokenKind, body: string): string => {
  const head = prefixes[kind] + body
  return head + checksum(head)
}

/** `length` uniformly random base62 characters (rejection sampling, no modulo bias). */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += alphabet[byte % 62]
    }
  }
  return out
}

/** A fresh random token of the given kind. */
export const generate = (kind: TokenKind): string => format(kind, randomBase62(bodyLength))

/** The kind of a well-formed token with a valid checksum; undefined for anything else. */
export const parse = (token: string): TokenKind | undefined => {
  const kind = (Object.keys(prefixes) as Array<TokenKind>).find((k) => token.startsWith(prefixes[k]))
  if (kind === undefined) return undefined
  const prefix = prefixes[kind]
  if (token.length !== prefix.length + bodyLength + checksumLength) return undefined
  const rest = token.slice(prefix.length)
  if (!base62.test(rest)) return undefined
  const head = token.slice(0, token.length - checksumLength)
  return checksum(head) === token.slice(head.length) ? kind : undefined
}

/** SHA-256 of the token, lowercase hex: the only form in which a token is stored. */
export const hash = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex")
