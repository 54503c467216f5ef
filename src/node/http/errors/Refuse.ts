/** The pieces every wire mapping of the node builds its refusals from. */
import { NodeError, type NodeErrorCode } from "../../../../schema/node/Errors.js"

/** At most this many characters of anything a client sent appear in a message. */
export const quotedLength = 40

const isControl = (char: string) => {
  const code = char.charCodeAt(0)
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029
}

/** A short, single-line prefix of client input, for a message; the input is never read past the prefix. */
export const quote = (text: string): string => {
  const head = Array.from(text.slice(0, quotedLength), (char) => (isControl(char) ? " " : char)).join("")
  return JSON.stringify(text.length > quotedLength ? `${head}…` : head)
}

/** What GET /map-tiles says of the same state, as a sentence (never the key). */
export const refuse = (code: NodeErrorCode, message: string, members: Record<string, unknown> = {}) =>
  new NodeError({ code, message, members })
