/**
 * Hostile input for the sweeps of every route (test/node/HostileSweep.test.ts,
 * test/marketplace/http/HostileSweep.test.ts): malformed, wrongly typed, deeply
 * nested and oddly encoded bodies, hostile path segments and query strings, and
 * a payload with every declared field of the wrong JSON type, read from the
 * OpenAPI document the contract generates.
 */

export type Body = readonly [label: string, body: string | Buffer, contentType: string]

const deep = (levels: number) => "[".repeat(levels) + "]".repeat(levels)

export const bodies: ReadonlyArray<Body> = [
  ["malformed JSON", "{\"text\": ", "application/json"],
  ["a JSON array", "[1, 2, 3]", "application/json"],
  ["a JSON string", "\"hello\"", "application/json"],
  ["JSON null", "null", "application/json"],
  ["5,000 levels of nesting", deep(5000), "application/json"],
  ["invalid UTF-8", Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), "application/json"],
  ["a byte-order mark", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("{}")]), "application/json"],
  ["NUL bytes", "{\"text\":\"a\u0000b\"}", "application/json"],
  ["UTF-16", Buffer.from("{\"text\":\"hi\"}", "utf16le"), "application/json; charset=utf-16"],
  ["XML", "<text>hi</text>", "application/xml"],
  ["no media type", "{}", ""]
]

export const segments: ReadonlyArray<readonly [label: string, value: string]> = [
  ["a NUL", "%00"],
  ["a long segment", "a".repeat(5000)],
  ["dot segments", "..%2F..%2Fetc"],
  ["invalid percent-encoding", "%E0%A4%A"],
  ["unicode", "%F0%9F%92%A9%E2%80%AE"]
]

export const queries: ReadonlyArray<string> = [
  "?limit=-1&cursor=%FF%FE",
  "?limit=1e309&limit=2",
  "?a[b][c][d]=1&__proto__[x]=1",
  `?q=${"x".repeat(10_000)}`
]

const jsonTypeOf = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

/**
 * The payload of `method path` (an OpenAPI path, `{param}` style) with every declared field of a JSON type its
 * schema does not allow; none when the route declares no JSON fields.
 */
export const wrongTypedBody = (document: any) => {
  const resolved = (schema: any): any =>
    typeof schema?.$ref === "string" ? resolved(document.components.schemas[schema.$ref.split("/").at(-1)]) : schema
  const variants = (schema: any): Array<any> => (schema?.anyOf ?? schema?.oneOf ?? [schema]).map(resolved)
  const wrongFor = (schema: any): unknown => {
    const allowed = new Set(variants(resolved(schema)).flatMap((branch) => {
      const type = branch?.type ?? (branch?.properties ? "object" : branch?.enum ? jsonTypeOf(branch.enum[0]) : undefined)
      return (Array.isArray(type) ? type : [type]).map((t: string) => (t === "integer" ? "number" : t))
    }))
    return [12345, "not this", true, ["not", "this"], { not: "this" }].find((value) => !allowed.has(jsonTypeOf(value))) ?? null
  }
  return (method: string, path: string): string | undefined => {
    const schema = resolved(document.paths[path]?.[method.toLowerCase()]?.requestBody?.content?.["application/json"]?.schema)
    const variant = variants(schema).find((v) => v?.properties)
    if (variant === undefined) return undefined
    return JSON.stringify(Object.fromEntries(Object.entries(variant.properties).map(([name, field]) => [name, wrongFor(field)])))
  }
}

/** Refusals of the request itself, before any route's own rules: credential, media type, size, target, rate. */
export const requestLevel: ReadonlySet<number> = new Set([400, 401, 403, 404, 405, 413, 415, 429])

/**
 * What is wrong with a refusal (a status of 400 or more), if anything: a status neither the route declares nor
 * the request level, a body that is not JSON, or JSON that `isEnvelope` does not accept.
 */
export const refusalProblem = (
  answer: Answer,
  declared: ReadonlyArray<number>,
  isEnvelope: (body: any) => boolean
): string | undefined => {
  if (!requestLevel.has(answer.status) && !declared.includes(answer.status)) return `undeclared status ${answer.status}`
  let body: unknown
  try {
    body = JSON.parse(answer.text)
  } catch {
    return `status ${answer.status} without a JSON body: ${JSON.stringify(answer.text.slice(0, 100))}`
  }
  return isEnvelope(body) ? undefined : `no envelope: ${answer.text.slice(0, 200)}`
}

export interface Answer {
  readonly status: number
  readonly contentType: string | null
  readonly text: string
}

/** Sends `body` as it is (bytes and media type) with `headers`. */
export const send = async (
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  contentType?: string
): Promise<Answer> => {
  const all: Record<string, string> = { ...headers }
  if (contentType) all["content-type"] = contentType
  const response = await fetch(url, { method, headers: all, ...(body === undefined || method === "GET" ? {} : { body }) })
  return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() }
}
