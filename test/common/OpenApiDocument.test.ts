/**
 * The corrections made to both services' generated OpenAPI documents
 * (schema/common/OpenApiDocument.ts), and the marketplace's description
 * passing the same independent OpenAPI 3.1 validator as the node's.
 */
import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { withoutComponents, withoutKeywordIds } from "../../schema/common/OpenApiDocument.js"
import { MarketplaceApi } from "../../schema/marketplace/Api.js"

const response = (schema: unknown) => ({ description: "Error", content: { "application/json": { schema } } })
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

describe("withoutKeywordIds", () => {
  it("drops the ids effect/JSONSchema gives its keyword schemas, and only those", () => {
    const document = {
      paths: { "/a": { get: { responses: { 200: response({ $id: "/schemas/unknown", title: "unknown" }) } } } },
      components: { schemas: { Mine: { $id: "https://example.com/mine", type: "object", additionalProperties: { $id: "/schemas/any" } } } }
    }
    expect(withoutKeywordIds(document)).toEqual({
      paths: { "/a": { get: { responses: { 200: response({ title: "unknown" }) } } } },
      components: { schemas: { Mine: { $id: "https://example.com/mine", type: "object", additionalProperties: {} } } }
    })
  })
})

describe("withoutComponents", () => {
  const document = {
    paths: {
      "/a": {
        get: {
          responses: {
            400: response({ anyOf: [ref("Decode"), ref("Invalid")] }),
            401: response(ref("Unauthenticated"))
          }
        }
      },
      "/b": { get: { responses: { 400: response(ref("Decode")) } } }
    },
    components: {
      schemas: {
        Decode: { type: "object", properties: { issues: { type: "array", items: ref("Issue") } } },
        Issue: { type: "object" },
        Invalid: { type: "object" },
        Unauthenticated: { type: "object" },
        Listed: { type: "object" }
      }
    }
  }

  it("removes the component, the responses left with nothing, and what only it referred to", () => {
    const result = withoutComponents(["Decode"])(document)
    expect(result.paths["/a"].get.responses).toEqual({
      400: response(ref("Invalid")),
      401: response(ref("Unauthenticated"))
    })
    expect(result.paths["/b"].get.responses).toEqual({})
    // `Listed` was referred to by nothing before either: an additional schema stays.
    expect(Object.keys(result.components.schemas).sort()).toEqual(["Invalid", "Listed", "Unauthenticated"])
    expect(JSON.stringify(result)).not.toContain("Decode")
  })
})

describe("the marketplace's OpenAPI description", () => {
  it("is valid OpenAPI 3.1 by an independent validator", async () => {
    const validator = new Validator()
    const result = await validator.validate(JSON.parse(JSON.stringify(OpenApi.fromApi(MarketplaceApi))))
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
  })
})
