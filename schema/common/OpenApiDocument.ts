/**
 * Corrections to the OpenAPI documents that @effect/platform generates, for
 * both services (`OpenApi.annotations({ transform })`).
 *
 * `effect/JSONSchema` renders the keyword schemas (Schema.Unknown, Any,
 * Object, `{}`, Never, Void) as constants carrying a fixed `$id` such as
 * `/schemas/unknown`, and `OpenApi.fromApi` inlines them wherever they occur.
 * In JSON Schema 2020-12, the dialect of OpenAPI 3.1, `$id` names a schema
 * resource: two of them with one id make the document invalid (and a relative
 * `$id` would change how `$ref`s inside it resolve). Nothing refers to these
 * ids, so they are dropped; every other `$id` stays.
 */

type Json = unknown
type JsonObject = { readonly [key: string]: Json }
export type OpenApiDocument = Record<string, any>

/** The `$id`s `effect/JSONSchema` gives its keyword schemas. */
export const keywordSchemaIds: ReadonlySet<string> = new Set([
  "/schemas/never",
  "/schemas/any",
  "/schemas/unknown",
  "/schemas/void",
  "/schemas/object",
  "/schemas/%7B%7D"
])

const isObject = (value: Json): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

const mapDeep = (value: Json, f: (object: JsonObject) => JsonObject): Json =>
  Array.isArray(value)
    ? value.map((item) => mapDeep(item, f))
    : isObject(value)
    ? f(Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapDeep(item, f)])))
    : value

/** The document without the keyword schemas' `$id`s. */
export const withoutKeywordIds = (document: OpenApiDocument): OpenApiDocument =>
  mapDeep(document, (object) => {
    if (typeof object.$id !== "string" || !keywordSchemaIds.has(object.$id)) return object
    const { $id: _, ...rest } = object
    return rest
  }) as OpenApiDocument

const componentRef = (name: string) => `#/components/schemas/${name}`

/** The names of the components some part of the document refers to, outside the component itself. */
const referenced = (document: OpenApiDocument): ReadonlySet<string> => {
  const names = new Set<string>()
  const schemas: Record<string, Json> = document.components?.schemas ?? {}
  const visit = (value: Json, owner: string | undefined) =>
    mapDeep(value, (object) => {
      if (typeof object.$ref === "string" && object.$ref.startsWith(componentRef(""))) {
        const name = object.$ref.slice(componentRef("").length)
        if (name !== owner) names.add(name)
      }
      return object
    })
  visit({ ...document, components: { ...document.components, schemas: {} } }, undefined)
  for (const [name, schema] of Object.entries(schemas)) visit(schema, name)
  return names
}

/**
 * The document without the named component schemas: responses stop offering
 * them (a response left with nothing is removed) and components nothing
 * refers to any more are dropped. For an error the API declares only to
 * replace it at run time, such as Effect's own `HttpApiDecodeError`.
 */
export const withoutComponents = (names: ReadonlyArray<string>) => (document: OpenApiDocument): OpenApiDocument => {
  const refs = new Set(names.map(componentRef))
  const isRemoved = (schema: Json) => isObject(schema) && typeof schema.$ref === "string" && refs.has(schema.$ref)
  const paths = mapDeep(document.paths, (object) => {
    if (!Array.isArray(object.anyOf)) return object
    const kept = object.anyOf.filter((schema) => !isRemoved(schema))
    if (kept.length === object.anyOf.length) return object
    const { anyOf: _, ...rest } = object
    return kept.length === 1 && isObject(kept[0]) ? { ...rest, ...kept[0] } : { ...rest, anyOf: kept }
  }) as Record<string, Record<string, any>>
  for (const operation of Object.values(paths).flatMap((item) => Object.values(item))) {
    if (!isObject(operation) || !isObject(operation.responses)) continue
    const responses: Record<string, any> = { ...operation.responses }
    for (const [status, response] of Object.entries(responses)) {
      const content: Record<string, any> | undefined = response?.content
      if (content === undefined) continue
      const left = Object.entries(content).filter(([, media]) => !isRemoved(media?.schema))
      if (left.length === 0) delete responses[status]
      else responses[status] = { ...response, content: Object.fromEntries(left) }
    }
    ;(operation as Record<string, any>).responses = responses
  }
  const before = referenced(document)
  const schemas: Record<string, Json> = { ...document.components?.schemas }
  for (const name of names) delete schemas[name]
  let result: OpenApiDocument = { ...document, paths, components: { ...document.components, schemas } }
  // Drop what only the removed components referred to (never a component nothing referred to before).
  for (;;) {
    const used = referenced(result)
    const unused = Object.keys(schemas).filter((name) => before.has(name) && !used.has(name))
    if (unused.length === 0) return result
    for (const name of unused) delete schemas[name]
    result = { ...result, components: { ...result.components, schemas: { ...schemas } } }
  }
}
