/**
 * A hostile client against the real node over real sockets: bodies over their
 * route's limit, other media types, empty bodies, deep nesting, odd encodings,
 * wrongly typed fields, huge values and input Node's own parser refuses. Every
 * answer is a complete `{code, message}` envelope with a documented status, and
 * nothing is stored.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  chunkLimitBytes,
  defaultLimitBytes,
  messageLimitBytes,
  pickLimitBytes,
  rulesFor
} from "../../src/node/http/Bodies.js"
import { conversation, timeline } from "../support/NodeFixtures.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"
import { exchange, head } from "../support/RawHttp.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({}))

/** Sends `body` as it is (bytes, headers and all) to a route of the node as the person. */
const send = (path: string, body: string | Buffer | undefined, headers: Record<string, string> = {}) =>
  Effect.flatMap(TestNode, (node) =>
    Effect.promise(async () => {
      const response = await fetch(`${node.baseUrl}${path}`, {
        method: "POST",
        headers: { ...node.headers("person"), ...headers },
        ...(body === undefined ? {} : { body })
      })
      const text = await response.text()
      let json: any
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      return { status: response.status, text, body: json }
    }))

const json = { "content-type": "application/json" }

/** The message route of a new conversation, and a check that it stored nothing. */
const messageRoute = Effect.map(conversation, (id) => ({
  path: `/conversations/${id}/messages`,
  nothingStored: Effect.map(timeline(id), (entries) => expect(entries).toEqual([]))
}))

const conversationCount = Effect.flatMap(TestNode, (node) => node.request("GET", "/conversations")).pipe(
  Effect.map((response) => response.body.conversations.length as number)
)

const expectInvalid = (response: { readonly status: number | undefined; readonly body: any }) => {
  expect(response.status).toBe(400)
  expect(response.body.code).toBe("INVALID_INPUT")
  expect(typeof response.body.message).toBe("string")
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

describe("body limits", () => {
  it.scoped("a message over its route's limit gets a complete answer naming the limit", () =>
    withNode(Effect.gen(function*() {
      const route = yield* messageRoute
      const response = yield* send(route.path, JSON.stringify({ text: "a".repeat(2 * 1024 * 1024) }), json)
      expectInvalid(response)
      expect(response.body.limitBytes).toBe(messageLimitBytes)
      expect(response.body.message).toContain(String(messageLimitBytes))
      yield* route.nothingStored
    })))

  it.scoped("the body is read only once the route wants it: an oversized body without a token is 401", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const route = yield* messageRoute
      const response = yield* Effect.promise(() =>
        fetch(`${node.baseUrl}${route.path}`, {
          method: "POST",
          headers: json,
          body: JSON.stringify({ text: "a".repeat(2 * 1024 * 1024) })
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { readonly code?: string } }))
      )
      expect(response.status).toBe(401)
      expect(response.body.code).toBe("UNAUTHENTICATED")
      yield* route.nothingStored
    })))

  it.scoped("a chunked body with no declared length is drained and answered, not reset", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const route = yield* messageRoute
      const piece = Buffer.alloc(64 * 1024, "a")
      const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")])
      const response = yield* exchange(node.baseUrl, [
        head([
          `POST ${route.path} HTTP/1.1`,
          "host: localhost",
          `authorization: Bearer ${node.token}`,
          "content-type: application/json",
          "transfer-encoding: chunked"
        ]),
        '2\r\n{"\r\n',
        ...Array.from({ length: 40 }, () => chunk),
        "0\r\n\r\n"
      ])
      expect(response.reset).toBe(false)
      expectInvalid(response)
      expect(response.body.limitBytes).toBe(messageLimitBytes)
      yield* route.nothingStored
    })))

  it.scoped("limits are per route: an artifact chunk passes where the default refuses", () =>
    withNode(Effect.gen(function*() {
      const route = yield* messageRoute
      const id = route.path.split("/")[2]
      // 262,144 bytes as base64: above the default limit, within the chunk route's.
      const chunk = JSON.stringify({ offset: 0, contentBase64: Buffer.alloc(262_144).toString("base64") })
      expect(chunk.length).toBeGreaterThan(defaultLimitBytes)
      const written = yield* send(`/conversations/${id}/widgets/w1/artifacts/a1/chunks`, chunk, json)
      expect(written.body.limitBytes).toBeUndefined()
      expect(written.body.code).not.toBe("INVALID_INPUT")
      const before = yield* conversationCount
      const created = yield* send("/conversations", JSON.stringify({ title: "t", padding: chunk }), json)
      expectInvalid(created)
      expect(created.body.limitBytes).toBe(defaultLimitBytes)
      expect(yield* conversationCount).toBe(before)
      const tooLarge = yield* send(
        `/conversations/${id}/widgets/w1/artifacts/a1/chunks`,
        JSON.stringify({ offset: 0, contentBase64: "A".repeat(chunkLimitBytes) }),
        json
      )
      expectInvalid(tooLarge)
      expect(tooLarge.body.limitBytes).toBe(chunkLimitBytes)
    })))

  it("the limits cover the largest valid payloads", () => {
    expect(chunkLimitBytes).toBeGreaterThan(4 * Math.ceil(262_144 / 3) + 1024)
    expect(pickLimitBytes).toBeGreaterThan(4 * Math.ceil((25 * 1024 * 1024) / 3) + 64 * 1024)
    expect(messageLimitBytes).toBeGreaterThan(6 * 100_000 + 64 * 1024)
  })
})

describe("media types and empty bodies", () => {
  const refusedTypes: ReadonlyArray<readonly [string, string | undefined, string]> = [
    ["multipart", "multipart/form-data; boundary=x", "--x\r\ncontent-disposition: form-data; name=\"text\"\r\n\r\nhi\r\n--x--\r\n"],
    ["urlencoded", "application/x-www-form-urlencoded", "text=hi"],
    ["plain text", "text/plain", "{\"text\":\"hi\"}"],
    ["no content type", undefined, "{\"text\":\"hi\"}"],
    ["another charset", "application/json; charset=latin1", "{\"text\":\"hi\"}"]
  ]
  for (const [name, contentType, body] of refusedTypes) {
    it.scoped(`a message sent as ${name} is refused and not stored`, () =>
      withNode(Effect.gen(function*() {
        const route = yield* messageRoute
        const response = yield* send(route.path, body, contentType === undefined ? {} : { "content-type": contentType })
        expectInvalid(response)
        yield* route.nothingStored
      })))
  }

  it.scoped("application/json with a UTF-8 charset is read", () =>
    withNode(Effect.gen(function*() {
      const route = yield* messageRoute
      const response = yield* send(route.path, "{\"text\":\"hi\"}", { "content-type": "application/json; charset=UTF-8" })
      expect(response.status).toBe(200)
    })))

  it.scoped("a route whose fields are all optional takes no body as {}", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const stopped = yield* send(`/conversations/${id}/stop`, undefined)
      expect(stopped.status).toBe(200)
      expect(stopped.body).toEqual({ stopped: false })
      const created = yield* send("/conversations", undefined)
      expect(created.status).toBe(201)
      const createdJson = yield* send("/conversations", "", json)
      expect(createdJson.status).toBe(201)
    })))
})

describe("hostile JSON", () => {
  it.scoped("a body nested 5,000 levels deep is a 400, not a stack overflow", () =>
    withNode(Effect.gen(function*() {
      const route = yield* messageRoute
      const inField = yield* send(route.path, `{"text":${nested(5000)}}`, json)
      expectInvalid(inField)
      const whole = yield* send(route.path, nested(5000), json)
      expectInvalid(whole)
      yield* route.nothingStored
    })))

  it.scoped("a value over its maxLength is quoted back as a short prefix only", () =>
    withNode(Effect.gen(function*() {
      const route = yield* messageRoute
      const response = yield* send(route.path, JSON.stringify({ text: "x".repeat(150_000) }), json)
      expectInvalid(response)
      expect(response.body.field).toBe("text")
      expect(response.text.length).toBeLessThan(1_000)
      expect(response.text).not.toContain("x".repeat(100))
      yield* route.nothingStored
    })))

  const oddBodies: ReadonlyArray<readonly [string, Buffer]> = [
    ["invalid UTF-8", Buffer.concat([Buffer.from("{\"text\":\""), Buffer.from([0xC3, 0x28, 0xFF]), Buffer.from("\"}")])],
    ["a byte order mark", Buffer.concat([Buffer.from([0xEF, 0xBB, 0xBF]), Buffer.from("{\"text\":\"hi\"}")])],
    ["a raw NUL", Buffer.from("{\"text\":\"h\u0000i\"}")],
    ["an escaped NUL", Buffer.from("{\"text\":\"h\\u0000i\"}")],
    ["a truncated document", Buffer.from("{\"text\":\"hi\"")],
    ["a number for the text", Buffer.from("{\"text\":5}")],
    ["a string for the attachment ids", Buffer.from("{\"text\":\"hi\",\"attachmentIds\":\"a1\"}")],
    ["references of another version", Buffer.from("{\"text\":\"hi\",\"references\":{\"version\":2,\"items\":[]}}")],
    ["an array for the body", Buffer.from("[\"hi\"]")]
  ]
  for (const [name, body] of oddBodies) {
    it.scoped(`a message with ${name} is 400 INVALID_INPUT and not stored`, () =>
      withNode(Effect.gen(function*() {
        const route = yield* messageRoute
        const response = yield* send(route.path, body, json)
        expectInvalid(response)
        yield* route.nothingStored
      })))
  }
})

describe("Node's own parser errors", () => {
  const cases: ReadonlyArray<readonly [string, (token: string) => ReadonlyArray<string>]> = [
    ["headers over Node's limit", (token) => [
      head(["GET /conversations HTTP/1.1", "host: localhost", `authorization: Bearer ${token}`, `x-big: ${"b".repeat(20_000)}`])
    ]],
    ["broken chunked framing", (token) => [
      head([
        "POST /conversations HTTP/1.1",
        "host: localhost",
        `authorization: Bearer ${token}`,
        "content-type: application/json",
        "transfer-encoding: chunked"
      ]),
      "zz\r\n{}\r\n0\r\n\r\n"
    ]],
    ["a malformed request line", () => ["GARBAGE\r\n\r\n"]]
  ]
  for (const [name, request] of cases) {
    it.scoped(`${name}: a complete envelope, then the connection closes`, () =>
      withNode(Effect.gen(function*() {
        const node = yield* TestNode
        const before = yield* conversationCount
        const response = yield* exchange(node.baseUrl, request(node.token))
        expect(response.reset).toBe(false)
        expectInvalid(response)
        expect(response.headers["content-type"]).toBe("application/json")
        expect(response.headers["connection"]).toBe("close")
        expect(yield* conversationCount).toBe(before)
      })))
  }

  it.scoped("headers over the limit name it", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const response = yield* exchange(node.baseUrl, [head(["GET /health HTTP/1.1", `x-big: ${"b".repeat(20_000)}`])])
      expect(response.body.limitBytes).toBe(16_384)
    })))
})

describe("route limits by path", () => {
  it("the route is found whatever form its target takes", () => {
    expect(rulesFor("/conversations/c1/messages").limitBytes).toBe(messageLimitBytes)
    expect(rulesFor("/conversations/c1/messages/stream?x=1").limitBytes).toBe(messageLimitBytes)
    expect(rulesFor("http://127.0.0.1:8788/conversations/c1/messages").limitBytes).toBe(messageLimitBytes)
    expect(rulesFor("/conversations/c1/widgets/w1/artifacts/pick").limitBytes).toBe(pickLimitBytes)
    expect(rulesFor("/conversations/c1/widgets/w1/artifacts/a1/chunks").limitBytes).toBe(chunkLimitBytes)
    expect(rulesFor("/conversations/c1/widgets/w1/artifacts").limitBytes).toBe(defaultLimitBytes)
    expect(rulesFor("/conversations").limitBytes).toBe(defaultLimitBytes)
  })
})
