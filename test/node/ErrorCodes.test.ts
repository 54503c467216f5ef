/**
 * The spec's Errors table against the generated OpenAPI description: every
 * code of the table is declared on some route, only ever under the status the
 * table gives it; each route declares the refusals of its kind (INVALID_INPUT
 * where it reads input, UNAUTHENTICATED behind a token, PERSON_ONLY when
 * person-only); the conversation routes declare exactly what the turn engine
 * answers. The table is parsed from a verbatim copy in fixtures/.
 *
 * The inbox and theme routes are outside the served description (the spec
 * says so) but their codes are in the table: they are described here by the
 * same generator with the exclusion lifted.
 */
import { FetchHttpClient, HttpApi, HttpApiClient, HttpClient, HttpClientRequest, OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { NodeApi } from "../../schema/node/Api.js"
import { NodeError, statusOfCode } from "../../schema/node/Errors.js"
import { ThemesGroup } from "../../schema/node/Theme.js"
import { InboxGroup } from "../../schema/node/Inbox.js"
import { PersonOnly } from "../../schema/node/Security.js"
import * as NodeServer from "../support/NodeServer.js"
import { type As, TestNode } from "../support/NodeServer.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const table = fs.readFileSync(path.join(here, "fixtures", "spec-errors.md"), "utf8")

// ---------------------------------------------------------------------------
// The spec's table

const codePattern = /\b[A-Z]{2,}(?:_[A-Z0-9]+)*\b/g

/** Status → codes, from the rows `| 409 | A, B, … |` (the 202 row is not an error). */
const specStatuses: ReadonlyMap<string, number> = (() => {
  const statuses = new Map<string, number>()
  for (const line of table.split("\n")) {
    const row = /^\|\s*(\d{3})\s*\|(.*)\|\s*$/.exec(line)
    if (row === null) continue
    const status = Number(row[1])
    if (status < 400) continue
    for (const code of row[2]!.match(codePattern) ?? []) statuses.set(code, status)
  }
  return statuses
})()

/** The 409 row says "and the other THEME_* codes": the spec names them where appearance falls back. */
const themeCodes: ReadonlyArray<string> =
  (table.split("\n").find((line) => line.includes("`fallback` gives one of"))?.split("gives one of")[1] ?? "")
    .match(codePattern) ?? []

/** "HTTP status of A, B and C: not shown": the statuses schema/node/Errors.ts chose stand. */
const notShown: ReadonlyArray<string> =
  (/^HTTP status of (.*): not shown/m.exec(table)?.[1] ?? "").match(codePattern) ?? []

// ---------------------------------------------------------------------------
// The generated description

const described = [
  OpenApi.fromApi(NodeApi),
  OpenApi.fromApi(
    HttpApi.make("nodeOutsideOpenApi")
      .add(InboxGroup.annotate(OpenApi.Exclude, false))
      .add(ThemesGroup.annotate(OpenApi.Exclude, false))
  )
]

interface Operation {
  readonly route: string
  readonly readsInput: boolean
  readonly authenticated: boolean
  /** Status → codes declared. */
  readonly refusals: ReadonlyMap<number, ReadonlyArray<string>>
  readonly responses: Record<string, any>
  readonly components: Record<string, any>
}

const resolve = (schema: any, components: Record<string, any>): any =>
  typeof schema?.$ref === "string" ? components[schema.$ref.replace("#/components/schemas/", "")] : schema

const membersOf = (schema: any, components: Record<string, any>): ReadonlyArray<any> => {
  const resolved = resolve(schema, components)
  return Array.isArray(resolved?.anyOf) ? resolved.anyOf.map((member: any) => resolve(member, components)) : [resolved]
}

const operations: ReadonlyArray<Operation> = described.flatMap((document) =>
  Object.entries(document.paths).flatMap(([route, item]) =>
    Object.entries(item as Record<string, any>).map(([method, operation]): Operation => {
      const components = document.components.schemas as Record<string, any>
      const refusals = new Map<number, Array<string>>()
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (Number(status) < 400) continue
        const codes = membersOf(response.content?.["application/json"]?.schema, components)
          .flatMap((member) => member?.properties?.code?.enum ?? [])
        refusals.set(Number(status), codes)
      }
      return {
        route: `${method.toUpperCase()} ${route}`,
        readsInput: operation.parameters.length > 0 || operation.requestBody !== undefined,
        authenticated: operation.security.length > 0,
        refusals,
        responses: operation.responses,
        components
      }
    })
  )
)

/** Code → statuses it is declared under, over every route. */
const declaredStatuses = (() => {
  const statuses = new Map<string, Set<number>>()
  for (const operation of operations) {
    for (const [status, codes] of operation.refusals) {
      for (const code of codes) statuses.set(code, new Set([...(statuses.get(code) ?? []), status]))
    }
  }
  return statuses
})()

const operation = (route: string) => {
  const found = operations.find((candidate) => candidate.route === route)
  if (found === undefined) throw new Error(`no route ${route} in the description`)
  return found
}

// ---------------------------------------------------------------------------

describe("the spec's Errors table", () => {
  it("is read from the fixture: nine error statuses, 52 codes, every THEME_* code and the four statuses not shown", () => {
    expect(new Set(specStatuses.values())).toEqual(new Set([400, 401, 403, 404, 409, 429, 502, 503, 504]))
    expect(specStatuses.size).toBe(52)
    expect(specStatuses.get("QUESTION_CLOSED")).toBe(409)
    expect(themeCodes).toEqual([
      "THEME_NOT_INSTALLED",
      "THEME_INVALID",
      "THEME_LOW_CONTRAST",
      "THEME_PROTECTED",
      "THEME_UNAVAILABLE",
      "THEME_UNKNOWN"
    ])
    expect(notShown).toEqual(["ACTION_INTERRUPTED", "APPROVAL_FORGED", "APPROVAL_ALREADY_DECIDED", "APPROVAL_EXPIRED"])
  })

  it("every code is declared on some route", () => {
    const expected = [...specStatuses.keys(), ...themeCodes, ...notShown]
    expect(expected.filter((code) => !declaredStatuses.has(code))).toEqual([])
  })

  it("every code is declared only under the status the table gives it", () => {
    const wanted = new Map<string, number>([
      ...specStatuses,
      ...themeCodes.map((code) => [code, 409] as const),
      // Not shown by the spec: the statuses the node chose stand.
      ...notShown.map((code) => [code, statusOfCode[code as keyof typeof statusOfCode]] as const)
    ])
    const misplaced = [...wanted].flatMap(([code, status]) =>
      [...(declaredStatuses.get(code) ?? [])].filter((declared) => declared !== status).map((declared) =>
        `${code} declared ${declared}, spec ${status}`
      )
    )
    expect(misplaced).toEqual([])
  })

  it("every code the node knows is declared on some route, so the API's error encoder can send it", () => {
    // A NodeError whose code no route declares would leave as an empty 500.
    const undeclared = Object.keys(statusOfCode).filter((code) => !declaredStatuses.has(code))
    expect(undeclared).toEqual([])
    const wrongStatus = Object.entries(statusOfCode).filter(([code, status]) =>
      [...(declaredStatuses.get(code) ?? [])].some((declared) => declared !== status)
    )
    expect(wrongStatus).toEqual([])
  })

  it("the delete refusal is a 409 with decision.kind refused; APPROVAL_REQUIRED is the install's 202", () => {
    const deletion = operation("POST /conversations/{id}/delete")
    const conflicts = membersOf(deletion.responses["409"].content["application/json"].schema, deletion.components)
    expect(conflicts.map((member) => member.properties?.decision?.properties?.kind?.enum)).toContainEqual(["refused"])
    const install = operation("POST /packages/install")
    const accepted = resolve(install.responses["202"].content["application/json"].schema, install.components)
    expect(accepted.properties.code.enum).toEqual(["APPROVAL_REQUIRED"])
  })
})

describe("refusals every route of a kind declares", () => {
  const personOnly = new Set<string>()
  HttpApi.reflect(NodeApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      const tags: ReadonlySet<unknown> = middleware
      if (tags.has(PersonOnly)) personOnly.add(`${endpoint.method} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`)
    }
  })

  it("400 INVALID_INPUT where a route reads a path, query or body", () => {
    // A route whose 400 is a page (the connection callback: a browser reads it) answers no JSON code there.
    const answersPages = (op: Operation) => op.responses["400"]?.content?.["text/html; charset=utf-8"] !== undefined
    const lacking = operations.filter((op) =>
      op.readsInput && !answersPages(op) && !(op.refusals.get(400) ?? []).includes("INVALID_INPUT")
    )
    expect(lacking.map((op) => op.route)).toEqual([])
  })

  it("401 UNAUTHENTICATED behind the token, 403 PERSON_ONLY on person-only routes", () => {
    const authenticated = operations.filter((op) => op.authenticated)
    expect(authenticated.length).toBeGreaterThan(50)
    expect(authenticated.filter((op) => !(op.refusals.get(401) ?? []).includes("UNAUTHENTICATED")).map((op) => op.route))
      .toEqual([])
    expect(operations.filter((op) => !op.authenticated && op.refusals.has(401)).map((op) => op.route)).toEqual([])
    // The spec's 14, PUT /preferences/execution.installs (docs/decisions.md, "Package install policy") and
    // PUT /preferences/execution.denyRules ("Package tools in turns, execution policy and task approvals") and
    // PUT /preferences/composer.projectFolders ("Composer suggestions and references").
    expect(personOnly.size).toBe(17)
    expect(
      [...personOnly].filter((route) => !(operation(route).refusals.get(403) ?? []).includes("PERSON_ONLY"))
    ).toEqual([])
  })
})

describe("the conversation routes", () => {
  /** What the turn engine answers, by route (401 and 500 left aside: every route has them). */
  const expected: ReadonlyArray<readonly [string, Record<number, ReadonlyArray<string>>]> = [
    ["POST /conversations/{id}/messages", {
      400: ["INVALID_INPUT", "REFERENCE_NOT_AVAILABLE"],
      404: ["RESOURCE_NOT_FOUND"]
    }],
    ["POST /conversations/{id}/messages/stream", {
      400: ["INVALID_INPUT", "REFERENCE_NOT_AVAILABLE"],
      404: ["RESOURCE_NOT_FOUND"]
    }],
    ["POST /conversations/{id}/stop", { 400: ["INVALID_INPUT"], 404: ["RESOURCE_NOT_FOUND"] }],
    ["GET /conversations/{id}/timeline", { 400: ["INVALID_INPUT"], 404: ["RESOURCE_NOT_FOUND"] }],
    ["POST /conversations/{id}/questions/{questionId}/answer", {
      400: ["INVALID_INPUT"],
      404: ["RESOURCE_NOT_FOUND"],
      409: ["QUESTION_CLOSED"]
    }],
    ["POST /conversations/{id}/questions/{questionId}/cancel", {
      400: ["INVALID_INPUT"],
      404: ["RESOURCE_NOT_FOUND"],
      409: ["QUESTION_CLOSED"]
    }],
    ["POST /conversations/{id}/questions/{questionId}/ask-again", {
      400: ["INVALID_INPUT"],
      404: ["RESOURCE_NOT_FOUND"],
      409: ["ALREADY_ASKED_AGAIN", "QUESTION_CLOSED", "QUESTION_OPEN"]
    }],
    ["POST /app-intents/host-control/{controlId}", {
      400: ["INVALID_INPUT"],
      403: ["PERSON_ONLY"],
      404: ["RESOURCE_NOT_FOUND"],
      409: ["HOST_CONTROL_ANSWERED"]
    }],
    ["GET /node", {}],
    ["GET /conversations", {}],
    ["POST /conversations", { 400: ["INVALID_INPUT"] }],
    ["POST /stop", {}]
  ]

  it.each(expected)("%s declares exactly its codes", (route, codes) => {
    const declared = Object.fromEntries(
      [...operation(route).refusals].filter(([status]) => status !== 401 && status !== 500).map((
        [status, list]
      ) => [status, [...list].sort()])
    )
    expect(declared).toEqual(codes)
  })

  it("ALREADY_ASKED_AGAIN carries askedAgainAs", () => {
    const askAgain = operation("POST /conversations/{id}/questions/{questionId}/ask-again")
    const members = membersOf(askAgain.responses["409"].content["application/json"].schema, askAgain.components)
    const already = members.find((member) => member.properties.code.enum[0] === "ALREADY_ASKED_AGAIN")
    expect(Object.keys(already.properties)).toContain("askedAgainAs")
  })
})

describe("the typed client over a real node", () => {
  const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({}))
  const clientAs = (as: As) =>
    Effect.flatMap(TestNode, (node) =>
      HttpApiClient.make(NodeApi, {
        baseUrl: node.baseUrl,
        transformClient: HttpClient.mapRequest(HttpClientRequest.setHeaders(node.headers(as)))
      })).pipe(Effect.provide(FetchHttpClient.layer))
  /** The declared refusal a call failed with; anything else (a transport or decoding failure) fails the test. */
  const refusal = <A, E>(call: Effect.Effect<A, E>) =>
    Effect.flatMap(Effect.flip(call), (error) => error instanceof NodeError ? Effect.succeed(error) : Effect.die(error))

  it.scoped("decodes each refusal as the code the route declares, with its members", () =>
    withNode(Effect.gen(function*() {
      const cli = yield* clientAs("cli-api")
      const person = yield* clientAs("person")

      const off = yield* refusal(cli.maps.tile({ path: { z: 1, x: 0, y: 0 } }))
      expect([off.status, off.code]).toEqual([404, "MAP_TILES_OFF"])

      const policy = { origin: "https://tiles.example", template: "/{z}/{x}/{y}.png", attribution: "Example", maxZoom: 2 }
      yield* person.maps.setTilePolicy({ payload: { value: policy } })
      const outside = yield* refusal(cli.maps.tile({ path: { z: 3, x: 0, y: 0 } }))
      expect([outside.status, outside.code, outside.members]).toEqual([400, "MAP_TILE_OUT_OF_BOUNDS", {
        z: 3,
        x: 0,
        y: 0,
        maxZoom: 2
      }])

      const invalid = yield* refusal(person.maps.setTilePolicy({ payload: { value: { ...policy, maxZoom: 20 } } }))
      expect([invalid.status, invalid.code, invalid.members.key]).toEqual([400, "PREFERENCE_INVALID", "maps.tilePolicy"])

      const machine = yield* refusal(cli.hostControl.answer({ path: { controlId: "hc_1" }, payload: { ran: true, say: "" } }))
      expect([machine.status, machine.code, machine.members]).toEqual([403, "PERSON_ONLY", { surface: "cli-api" }])

      const { conversationId } = yield* cli.conversations.create({ payload: {} })
      const missing = yield* refusal(cli.questions.askAgain({ path: { id: conversationId, questionId: "q_none" } }))
      expect([missing.status, missing.code]).toEqual([404, "RESOURCE_NOT_FOUND"])

      const anonymous = yield* clientAs("none")
      const refused = yield* refusal(anonymous.conversations.list())
      expect([refused.status, refused.code]).toEqual([401, "UNAUTHENTICATED"])
    })))
})
