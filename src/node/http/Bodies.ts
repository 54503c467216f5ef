/**
 * The node's request body limits, in one place (README "Limits",
 * docs/decisions.md "Request bodies"). A body over its route's limit, of another
 * media type than JSON, not UTF-8 or nested too deep is refused with 400
 * INVALID_INPUT (`limitBytes` names the limit), never with a reset connection.
 */
import type { BodyRules } from "../../http/Bodies.js"
import { readChunkJson } from "./ChunkBody.js"

/** Every route not named below: the largest of them (a question's answer) needs about 120 KB at worst. */
export const defaultLimitBytes = 256 * 1024

/**
 * A message: 100,000 characters of text, each at most 6 bytes when JSON-escaped
 * (`\u0000`), with 32 attachment ids and 8 references: about 665 KB at worst.
 */
export const messageLimitBytes = 1024 * 1024

/** An artifact chunk: 262,144 bytes travel as 349,528 characters of base64 inside JSON. */
export const chunkLimitBytes = 512 * 1024

/** A picked file: up to 25 MiB, so 34,952,536 characters of base64 plus its name and accept list. */
export const pickLimitBytes = 35 * 1024 * 1024

/** No node payload nests deeper than a handful of levels; every decoder after the check recurses. */
export const maxDepth = 64

const routeLimits: ReadonlyArray<readonly [RegExp, number, BodyRules["read"]?]> = [
  [/^\/conversations\/[^/]+\/messages(?:\/stream)?\/?$/, messageLimitBytes],
  [/^\/conversations\/[^/]+\/widgets\/[^/]+\/artifacts\/pick\/?$/, pickLimitBytes],
  [/^\/conversations\/[^/]+\/widgets\/[^/]+\/artifacts\/[^/]+\/chunks\/?$/, chunkLimitBytes, readChunkJson]
]

/** The path of a request target: origin-form (`/a?b`) as browsers send it, or absolute-form (`http://h/a?b`). */
const pathOf = (url: string): string => {
  if (!url.startsWith("/")) {
    try {
      return new URL(url).pathname
    } catch {
      return url
    }
  }
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/** The body rules of a request's target. */
export const rulesFor = (url: string): BodyRules => {
  const path = pathOf(url)
  for (const [pattern, limitBytes, read] of routeLimits) {
    if (pattern.test(path)) return read === undefined ? { limitBytes, maxDepth } : { limitBytes, maxDepth, read }
  }
  return { limitBytes: defaultLimitBytes, maxDepth }
}
