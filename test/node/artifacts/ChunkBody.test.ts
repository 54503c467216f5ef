/**
 * The chunk route's body reader (src/node/http/ChunkBody.ts) answers exactly what the generic reader answers
 * (src/http/Bodies.ts `parse`): the same value, or the same refusal, for chunk bodies, hostile ones and generated
 * ones; and through the real node a chunk's bytes land as sent, hostile chunk bodies are refused with the answers
 * the other routes give, and concurrent chunks on the reader's pooled buffers keep their own bytes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { artifactsDir } from "../../../layers/node/sql/SqlArtifactStore.js"
import { DecodedBase64, decodeBase64Ascii, decodeBase64, maxChunkBytes } from "../../../schema/node/Artifact.js"
import { parse } from "../../../src/http/Bodies.js"
import { maxDepth } from "../../../src/node/http/Bodies.js"
import { longLiteral, parseChunkBody } from "../../../src/node/http/ChunkBody.js"
import { conversation } from "../../support/NodeFixtures.js"
import { TestNode } from "../../support/NodeServer.js"
import { person, widget, withNode } from "./MachineWritesSupport.js"

/** What a reader answers, as plain data: the value, or the refusal's reason, message, limit and path. */
const outcome = (effect: Effect.Effect<unknown, { readonly reason: string; readonly message: string }>) =>
  Either.match(Effect.runSync(Effect.either(effect)), {
    onLeft: (refused) => ({ refused: { ...refused } }),
    onRight: (value) => ({ value })
  })

/** The chunk reader's value with a decoded `contentBase64` read back as its base64 text. */
const asText = (value: unknown) =>
  typeof value === "object" && value !== null && (value as any).contentBase64 instanceof DecodedBase64
    ? { ...value, contentBase64: Buffer.from((value as any).contentBase64.bytes).toString("base64") }
    : value

const expectAlike = (body: string | Buffer) => {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body
  const generic = outcome(parse(bytes, maxDepth))
  const chunk = outcome(parseChunkBody(Buffer.from(bytes), maxDepth))
  expect("value" in chunk ? { value: asText(chunk.value) } : chunk).toEqual(generic)
  return { generic, chunk }
}

/** Base64 of `n` bytes: past `longLiteral` characters it is cut out of the text. */
const base64Of = (n: number, fill = 0x61) => Buffer.alloc(n, fill).toString("base64")
const long = base64Of(6000)

describe("the chunk body reader answers as the generic reader", () => {
  it("a whole chunk: the same value, its base64 already decoded", () => {
    const sent = Buffer.from(Array.from({ length: maxChunkBytes }, (_, i) => (i * 31) % 256))
    const text = sent.toString("base64")
    expect(text.length).toBeGreaterThanOrEqual(longLiteral)
    const { chunk, generic } = expectAlike(JSON.stringify({ offset: 262_144, contentBase64: text }))
    expect(generic).toEqual({ value: { offset: 262_144, contentBase64: text } })
    const decoded = (chunk as { value: { contentBase64: DecodedBase64 } }).value.contentBase64
    expect(decoded).toBeInstanceOf(DecodedBase64)
    expect(Buffer.from(decoded.bytes).equals(sent)).toBe(true)
    expect(decoded.textLength).toBe(text.length)
  })

  it("base64 one character past a chunk, or elsewhere than at contentBase64, stays text", () => {
    const past = `${base64Of(maxChunkBytes)}AAAA`
    expect((expectAlike(`{"contentBase64":"${past}"}`).chunk as any).value.contentBase64).toBe(past)
    expect((expectAlike(`{"x":{"contentBase64":"${long}"}}`).chunk as any).value.x.contentBase64).toBe(long)
    expect((expectAlike(`["${long}"]`).chunk as any).value[0]).toBe(long)
  })

  it.each([
    ["two long literals and a short one", `{"a":"${long}","b":["${long}","x"],"offset":1}`],
    ["a long literal at the top", `"${long}"`],
    ["whitespace around every token", ` { "contentBase64" : "${long}" , "offset" : 0 } \n`],
    ["the same key twice (the last wins)", `{"contentBase64":"${long}","contentBase64":"${long}AAAA"}`],
    ["a long literal that is not base64 (the schema refuses it later)", `{"contentBase64":"${long} -_=.~"}`],
    ["a long key", `{"${long}":1}`],
    ["a long key and a long value", `{"${long}":"${long}"}`],
    ["a raw control character in the long literal", `{"contentBase64":"${long}\u0001"}`],
    ["a raw tab in the long literal", `{"contentBase64":"${long.slice(0, 100)}\t${long}"}`],
    ["a raw NUL in the long literal", `{"contentBase64":"${long}\u0000"}`],
    ["an escaped NUL beside the long literal", `{"contentBase64":"${long}","name":"a\\u0000b"}`],
    ["an escaped quote in the long literal", `{"contentBase64":"${long}\\"${long}"}`],
    ["a lone surrogate beside the long literal", `{"contentBase64":"${long}","name":"\\ud800"}`],
    ["non-ASCII beside the long literal", `{"contentBase64":"${long}","name":"Übersicht"}`],
    ["the placeholder's own text sent as a value", `{"contentBase64":"${long}","name":"\\u00010"}`],
    ["an unfinished long literal", `{"contentBase64":"${long}`],
    ["an unfinished short literal after a long one", `{"contentBase64":"${long}","name":"x}`],
    ["a missing colon", `{"contentBase64" "${long}"}`],
    ["text after the value", `{"contentBase64":"${long}"} x`],
    ["two values", `"${long}" "${long}"`],
    ["a long literal where a number belongs", `{"offset":1"${long}"}`],
    ["nesting past the limit", `{"contentBase64":"${long}","x":${"[".repeat(maxDepth)}${"]".repeat(maxDepth)}}`],
    ["nesting at the limit", `{"contentBase64":"${long}","x":${"[".repeat(maxDepth - 1)}${"]".repeat(maxDepth - 1)}}`],
    ["brackets inside the long literal do not nest", `{"contentBase64":"${"[".repeat(longLiteral)}"}`],
    ["the offset a string", `{"offset":"0","contentBase64":"${long}"}`],
    ["empty", ""],
    ["whitespace only", " \n "],
    ["no long literal", `{"offset":0,"contentBase64":"YQ=="}`]
  ])("%s", (_, body) => {
    expectAlike(body)
  })

  it("invalid UTF-8 and a byte order mark", () => {
    expectAlike(Buffer.concat([Buffer.from(`{"contentBase64":"${long}","n":"`), Buffer.from([0xC3, 0x28]), Buffer.from("\"}")]))
    expectAlike(Buffer.concat([Buffer.from([0xEF, 0xBB, 0xBF]), Buffer.from(`{"contentBase64":"${long}"}`)]))
  })

  it("generated bodies: token soups and JSON values with long literals", () => {
    const token = fc.constantFrom(
      "{", "}", "[", "]", ",", ":", " ", "0", "-1.5e3", "true", "null", "\"", "\\", "\\\"", "\u0001", "\t", "é",
      "\"offset\"", "\"contentBase64\"", "\"x\"", `"${long}"`, `"${long.slice(1)}"`, long, `"${long} ${long}"`
    )
    fc.assert(
      fc.property(fc.array(token, { maxLength: 24 }), (tokens) => {
        expectAlike(tokens.join(""))
      }),
      { numRuns: 3000 }
    )
    const leaf = fc.oneof(
      fc.jsonValue({ maxDepth: 1 }),
      fc.constantFrom(long, long.slice(3), `${long}\u0001`, `${long}"`, `${long}é`, `${"A".repeat(longLiteral)}`)
    )
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        leaf,
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constant(long)), tie("value"), { maxKeys: 4 })
      )
    }))
    fc.assert(
      fc.property(value, (generated) => {
        expect(expectAlike(JSON.stringify(generated)).generic).toEqual({ value: JSON.parse(JSON.stringify(generated)) })
      }),
      { numRuns: 1000 }
    )
  })
})

describe("decodeBase64Ascii", () => {
  /** The definition: groups of four alphabet characters, the last one padded with at most two `=`. */
  const reference = (text: string) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)
  const character = fc.constantFrom(..."ABCXYZabcxyz0189+/=-_ \n\t.\u0000\u0001\"\\~")

  it("answers as decodeBase64 on ASCII text, pieces of any size", () => {
    fc.assert(
      fc.property(fc.array(character, { maxLength: 40 }).map((cs) => cs.join("")), fc.integer({ min: 1, max: 4 }), (text, quarter) => {
        const decoded = decodeBase64Ascii(Buffer.from(text, "latin1"), quarter * 4)
        expect(decoded === undefined).toBe(!reference(text))
        expect(decoded).toEqual(decodeBase64(text))
      }),
      { numRuns: 5000 }
    )
    // Valid text of any length with one character changed somewhere, in pieces of 8 characters and of the default.
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 3000 }), fc.nat(), character, (bytes, at, c) => {
        const text = Buffer.from(bytes).toString("base64")
        const i = at % text.length
        const changed = text.slice(0, i) + c + text.slice(i + 1)
        for (const piece of [8, undefined]) {
          expect(Buffer.from(decodeBase64Ascii(Buffer.from(text, "latin1"), piece)!).equals(Buffer.from(bytes))).toBe(true)
          expect(decodeBase64Ascii(Buffer.from(changed, "latin1"), piece)).toEqual(decodeBase64(changed))
        }
      }),
      { numRuns: 2000 }
    )
  })
})

/** A chunk body exactly as sent (bytes, content type), to a widget's file. */
const sendRaw = (route: string, body: string | Buffer, contentType = "application/json") =>
  Effect.flatMap(TestNode, (node) =>
    Effect.promise(async () => {
      const response = await fetch(`${node.baseUrl}${route}`, {
        method: "POST",
        headers: { ...node.headers("person"), "content-type": contentType },
        body
      })
      return { status: response.status, body: (await response.json()) as any }
    }))

/** A new unfinished file of a new widget: its chunk route and where its bytes live. */
const newFile = Effect.gen(function*() {
  const id = yield* conversation
  const { files } = yield* widget(id)
  const created = yield* person("POST", files, { mimeType: "application/octet-stream" })
  const artifactId = created.body.artifactRef.artifactId as string
  const node = yield* TestNode
  return {
    chunks: `${files}/${artifactId}/chunks`,
    size: Effect.map(person("GET", `/artifacts/${artifactId}`), (r) => r.body.artifactRef.sizeBytes as number),
    bytes: () => fs.readFileSync(path.join(artifactsDir(node.dataDir), artifactId))
  }
})

const chunkBody = (offset: number, bytes: Buffer) => JSON.stringify({ offset, contentBase64: bytes.toString("base64") })

describe("chunk bodies through the real node", () => {
  it.scoped("whole chunks land as sent, then a shorter one (a pooled buffer holds nothing of the last body)", () =>
    withNode(Effect.gen(function*() {
      const file = yield* newFile
      const first = Buffer.alloc(maxChunkBytes, 0x11)
      const second = Buffer.from(Array.from({ length: maxChunkBytes }, (_, i) => (i * 7) % 256))
      const third = Buffer.alloc(5000, 0x33)
      expect((yield* sendRaw(file.chunks, chunkBody(0, first))).status).toBe(200)
      expect((yield* sendRaw(file.chunks, chunkBody(maxChunkBytes, second), "application/json; charset=utf-8")).status).toBe(200)
      const written = yield* sendRaw(file.chunks, chunkBody(2 * maxChunkBytes, third))
      expect(written).toMatchObject({ status: 200, body: { artifactRef: { sizeBytes: 2 * maxChunkBytes + 5000 } } })
      expect(file.bytes().equals(Buffer.concat([first, second, third]))).toBe(true)
    })))

  it.scoped("concurrent chunks to several files each keep their own bytes", () =>
    withNode(Effect.gen(function*() {
      const files = yield* Effect.all(Array.from({ length: 6 }, () => newFile))
      const contents = files.map((_, k) => Buffer.alloc(maxChunkBytes - k * 1000, 0x41 + k))
      const answers = yield* Effect.all(
        files.map((file, k) => sendRaw(file.chunks, chunkBody(0, contents[k]!))),
        { concurrency: "unbounded" }
      )
      expect(answers.map((a) => a.status)).toEqual(files.map(() => 200))
      files.forEach((file, k) => expect(file.bytes().equals(contents[k]!)).toBe(true))
    })))

  it.scoped("hostile chunk bodies are refused as on every route, and nothing is written", () =>
    withNode(Effect.gen(function*() {
      const file = yield* newFile
      const text = base64Of(maxChunkBytes)
      const refusals: ReadonlyArray<readonly [string, string | Buffer, Record<string, unknown>]> = [
        ["a raw control character", `{"offset":0,"contentBase64":"${text}\u0001"}`, {
          message: "The request body is not valid JSON"
        }],
        ["unfinished", `{"offset":0,"contentBase64":"${text}`, { message: "The request body is not valid JSON" }],
        ["text after the object", `{"offset":0,"contentBase64":"${text}"}]`, { message: "The request body is not valid JSON" }],
        ["not base64", `{"offset":0,"contentBase64":"${text.slice(8)} AAA"}`, { field: "contentBase64" }],
        ["URL-safe base64", `{"offset":0,"contentBase64":"${text.slice(8)}-_AA"}`, { field: "contentBase64" }],
        ["one character past a chunk", `{"offset":0,"contentBase64":"${text}AAAA"}`, { field: "contentBase64" }],
        ["the base64 under another key", `{"offset":0,"content":"${text}"}`, { field: "contentBase64" }],
        ["the base64 as a key", `{"offset":0,"${text}":"YQ=="}`, { field: "contentBase64" }],
        ["the base64 in an array", `{"offset":0,"contentBase64":["${text}"]}`, { field: "contentBase64" }],
        ["the offset a string", `{"offset":"0","contentBase64":"${text}"}`, { field: "offset" }],
        ["nested too deep", `{"offset":0,"contentBase64":"${text}","x":${"[".repeat(maxDepth)}${"]".repeat(maxDepth)}}`, {
          message: `The request body is nested deeper than ${maxDepth} levels`
        }],
        ["a NUL beside the base64", `{"offset":0,"contentBase64":"${text}","name":"\\u0000"}`, {
          message: "The request body contains a NUL character at name"
        }]
      ]
      for (const [label, body, expected] of refusals) {
        const answer = yield* sendRaw(file.chunks, body)
        expect({ label, status: answer.status, code: answer.body.code }).toEqual({ label, status: 400, code: "INVALID_INPUT" })
        expect(answer.body).toMatchObject(expected)
      }
      const otherType = yield* sendRaw(file.chunks, chunkBody(0, Buffer.alloc(maxChunkBytes)), "text/plain")
      expect(otherType).toMatchObject({ status: 400, body: { code: "INVALID_INPUT" } })
      expect(yield* file.size).toBe(0)
      expect(file.bytes().length).toBe(0)
    })))
})
