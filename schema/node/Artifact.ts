/**
 * Artifacts: files a widget writes or is handed, read by ref, never by path.
 * Widget routes live under `/conversations/{id}/widgets/{instanceId}`; the
 * routes outside that prefix read, fetch and export one artifact by id.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { ParseResult, Schema } from "effect"
import { DateTimeString } from "../common/Text.js"
import { refusals } from "./Errors.js"
import { LookupId, WidgetPath, widgetPrefix } from "./Instance.js"
import { Authenticated, PersonOnly } from "./Security.js"

/** At most this many bytes per chunk written or read. */
export const maxChunkBytes = 262_144
/** At most this many bytes per file. */
export const maxArtifactBytes = 25 * 1024 * 1024
/** Storage of one widget's own files. */
export const maxInstanceStorageBytes = 128 * 1024 * 1024

const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3)

/**
 * Whether the text is standard base64 with padding, found by decoding it rather than by a pattern: Node's decoder
 * skips characters outside the alphabet and stops at a `=` inside the text, so such text decodes to fewer bytes than
 * its length promises. The decoder also takes the URL-safe `-` and `_`, and reads a character above U+00FF by its low
 * byte (`Ł` as `A`), so those are looked for apart (`includes`, and the UTF-8 length, which equals the length for
 * ASCII only). A 262,144-byte chunk costs one SIMD decode and two scans, about 0.1-0.3 ms, where the one-class
 * pattern `^[A-Za-z0-9+/]*={0,2}$` took 0.7-2 ms and the grouped pattern before it about 40 ms.
 */
export const isBase64 = (text: string): boolean => decodeBase64(text) !== undefined

/** The bytes of standard base64 text with padding, or undefined when the text is not that (see `isBase64`). */
export const decodeBase64 = (text: string): Uint8Array | undefined => {
  if (text.length % 4 !== 0) return undefined
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0
  const bytes = Buffer.from(text, "base64")
  const valid = bytes.byteLength === (text.length / 4) * 3 - padding &&
    Buffer.byteLength(text, "utf8") === text.length && !text.includes("-") && !text.includes("_")
  return valid ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : undefined
}

/** Standard base64 (with padding) of at most `maxBytes` bytes. */
export const Base64 = (maxBytes: number) =>
  Schema.String.pipe(
    Schema.maxLength(base64Length(maxBytes)),
    Schema.filter(isBase64, { message: () => "must be standard base64 with padding" })
  )

export const MimeType = Schema.String.pipe(
  Schema.maxLength(255),
  Schema.pattern(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(?:\s*;\s*[a-z0-9!#$&^_.+-]+=[^;\s]+)*$/i, {
    message: () => "must be a media type such as image/png"
  })
).annotations({ identifier: "MimeType" })

/** A file name as sent by a widget or the person; the node sanitises it (never a path). */
export const FileName = Schema.String.pipe(Schema.maxLength(255))

/**
 * Where an artifact came from: a file the widget made (`widget`), a file the
 * person chose (`picked`), a job result (`job`), fetched media (`media`).
 */
export const ArtifactKind = Schema.Literal("widget", "picked", "job", "media")
export type ArtifactKind = typeof ArtifactKind.Type

/** What a widget receives instead of a path. `digest` is present once the file is finalized. */
export const ArtifactRef = Schema.Struct({
  v: Schema.Literal(1),
  artifactId: Schema.String,
  kind: ArtifactKind,
  mimeType: Schema.String,
  sizeBytes: Schema.Int.pipe(Schema.nonNegative()),
  name: Schema.String,
  digest: Schema.optional(Schema.String)
}).annotations({ identifier: "ArtifactRef" })
export type ArtifactRef = typeof ArtifactRef.Type

export const ArtifactState = Schema.Literal("unfinished", "finalized")
export type ArtifactState = typeof ArtifactState.Type

/** GET /artifacts/{artifactId}: the artifact with its ref. */
export const Artifact = Schema.Struct({
  artifactRef: ArtifactRef,
  state: ArtifactState,
  conversationId: Schema.String,
  instanceId: Schema.NullOr(Schema.String),
  createdAt: DateTimeString,
  updatedAt: DateTimeString
}).annotations({ identifier: "Artifact" })
export type Artifact = typeof Artifact.Type

/** A machine-surface file write the person's policy asks about first (202). */
export const WriteApprovalRequired = Schema.Struct({
  outcome: Schema.Literal("approval-required"),
  approvalRequired: Schema.Struct({ approvalId: Schema.String })
}).annotations({ identifier: "WriteApprovalRequired" })

export const WidgetArtifactPath = Schema.Struct({ ...WidgetPath.fields, artifactId: LookupId })
export const ArtifactPath = Schema.Struct({ artifactId: LookupId })

export const ReadParams = Schema.Struct({
  offset: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, maxArtifactBytes))),
  length: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, maxChunkBytes)))
})

export const ArtifactChunk = Schema.Struct({
  artifactRef: ArtifactRef,
  offset: Schema.Int.pipe(Schema.nonNegative()),
  eof: Schema.Boolean,
  contentBase64: Base64(maxChunkBytes)
}).annotations({ identifier: "ArtifactChunk" })

export const CreateArtifact = Schema.Struct({ mimeType: MimeType, name: Schema.optional(FileName) })

export const ArtifactCreated = Schema.Struct({ artifactRef: ArtifactRef }).annotations({ identifier: "ArtifactCreated" })

/** `accept` lists media types or extensions (as in a file input's accept attribute). */
export const PickArtifact = Schema.Struct({
  name: FileName,
  mimeType: MimeType,
  contentBase64: Base64(maxArtifactBytes),
  accept: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(255))).pipe(Schema.maxItems(32)))
})

/**
 * Standard base64 on the wire, its bytes once decoded: the check is the decoding, so a chunk is decoded once (the
 * route's hot path, issue 15 point 10), not checked here and decoded again by the handler.
 */
export const Base64Bytes = (maxBytes: number) =>
  Schema.transformOrFail(Schema.String.pipe(Schema.maxLength(base64Length(maxBytes))), Schema.Uint8ArrayFromSelf, {
    strict: true,
    decode: (text, _, ast) => {
      const bytes = decodeBase64(text)
      return bytes === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, text, "must be standard base64 with padding"))
        : ParseResult.succeed(bytes)
    },
    encode: (bytes) => ParseResult.succeed(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"))
  })

/**
 * A chunk's base64 text already checked and decoded by the chunk route's body reader (src/node/http/ChunkBody.ts)
 * straight from the body's bytes, standing where the text was: no 349,528-character string is made for it (issue 15
 * point 10). Only that reader makes one, only at `contentBase64` and only within the length the text may have; JSON
 * cannot carry one, so every other caller still sends the text.
 */
export class DecodedBase64 {
  constructor(readonly bytes: Uint8Array, readonly textLength: number) {}
  toString() {
    return `<${this.textLength} characters of base64>`
  }
}

/** Decodes ASCII base64 held in bytes this many characters at a time: each piece a string too small for V8's large-object space. */
const base64Piece = 65_536

/**
 * `decodeBase64` of ASCII text held in bytes (the same answer for every text: test/node/artifacts/Base64.test.ts),
 * decoded piece by piece into one buffer, so no string of the whole text is made. Each piece but the last must decode
 * to three bytes per four characters: Node's decoder skips a character outside the alphabet and stops at a `=`, so
 * any such character inside makes a piece short; the last may be short by its padding only.
 */
export const decodeBase64Ascii = (ascii: Uint8Array, pieceLength = base64Piece): Uint8Array | undefined => {
  const length = ascii.byteLength
  if (length % 4 !== 0 || pieceLength % 4 !== 0) return undefined
  const text = Buffer.from(ascii.buffer, ascii.byteOffset, length)
  if (text.includes(0x2D) || text.includes(0x5F)) return undefined
  const padding = length === 0 || text[length - 1] !== 0x3D ? 0 : text[length - 2] === 0x3D ? 2 : 1
  const bytes = Buffer.allocUnsafeSlow((length / 4) * 3 - padding)
  let written = 0
  for (let at = 0; at < length; at += pieceLength) {
    const end = Math.min(at + pieceLength, length)
    const expected = ((end - at) / 4) * 3 - (end === length ? padding : 0)
    if (bytes.write(text.toString("latin1", at, end), written, expected, "base64") !== expected) return undefined
    written += expected
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/**
 * The chunk's bytes: standard base64 on the wire (`Base64Bytes`, whose checks and messages a text gets), or the
 * bytes the chunk route's reader decoded (`DecodedBase64`). The OpenAPI document shows the text's schema only.
 */
export const ChunkBytes = (maxBytes: number) => {
  const text = Base64Bytes(maxBytes)
  const maxLength = base64Length(maxBytes)
  return Schema.transformOrFail(
    Schema.Unknown.annotations({
      jsonSchema: {
        type: "string",
        description: `a string at most ${maxLength} character(s) long`,
        title: `maxLength(${maxLength})`,
        maxLength
      }
    }),
    Schema.Uint8ArrayFromSelf,
    {
      strict: true,
      decode: (input, options) =>
        input instanceof DecodedBase64 && input.textLength <= maxLength
          ? ParseResult.succeed(input.bytes)
          : ParseResult.decodeUnknown(text)(input, options),
      encode: (bytes, options) => ParseResult.encodeUnknown(text)(bytes, options)
    }
  )
}

/** `contentBase64` is the chunk's bytes once decoded (the wire carries base64, as the spec says). */
export const WriteChunk = Schema.Struct({
  offset: Schema.Int.pipe(Schema.nonNegative(), Schema.lessThanOrEqualTo(maxArtifactBytes)),
  contentBase64: ChunkBytes(maxChunkBytes)
})

/** After a chunk: the file as it now stands (`sizeBytes` is where the next chunk starts). */
export const ChunkWritten = Schema.Struct({ artifactRef: ArtifactRef }).annotations({ identifier: "ChunkWritten" })

export const Finalized = Schema.Struct({ artifactRef: ArtifactRef }).annotations({ identifier: "Finalized" })

export const AttachArtifact = Schema.Struct({ name: Schema.optional(FileName) })

/** The composer attachment a file became; `attachmentId` goes into a message's `attachmentIds`. */
export const AttachmentRef = Schema.Struct({
  attachmentId: Schema.String,
  name: Schema.String,
  mimeType: Schema.String,
  sizeBytes: Schema.Int.pipe(Schema.nonNegative())
}).annotations({ identifier: "AttachmentRef" })

export const Attached = Schema.Struct({ artifactRef: ArtifactRef, attachmentRef: AttachmentRef }).annotations({
  identifier: "Attached"
})

export const Discarded = Schema.Struct({ discarded: Schema.Literal(true), artifactId: Schema.String }).annotations({
  identifier: "Discarded"
})

export const ExportArtifact = Schema.Struct({ suggestedName: Schema.optional(FileName) })

/**
 * File bytes. The declared type is the generic one; handlers answer with the
 * artifact's own media type (and Content-Disposition for exports).
 */
export const ArtifactBytes = HttpApiSchema.Uint8Array({ contentType: "application/octet-stream" })

export class WidgetArtifactsGroup extends HttpApiGroup.make("widgetArtifacts")
  .add(
    HttpApiEndpoint.get("read", `${widgetPrefix}/artifacts/:artifactId/content`)
      .setPath(WidgetArtifactPath)
      .setUrlParams(ReadParams)
      .addSuccess(ArtifactChunk)
      .addError(refusals(
        "INVALID_INPUT", "INSTANCE_UNKNOWN", "ARTIFACT_NOT_FOUND", "NOT_INSTALLED", "ARTIFACT_NOT_FINALIZED",
        "NOT_IMPLEMENTED"
      ))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("create", `${widgetPrefix}/artifacts`)
      .setPath(WidgetPath)
      .setPayload(CreateArtifact)
      .addSuccess(ArtifactCreated, { status: 201 })
      .addSuccess(WriteApprovalRequired, { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "POLICY_REFUSED", "INSTANCE_UNKNOWN", "ARTIFACT_INSTANCE_QUOTA_EXCEEDED",
        "APPROVALS_PENDING", "NOT_IMPLEMENTED"
      ))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("pick", `${widgetPrefix}/artifacts/pick`)
      .setPath(WidgetPath)
      .setPayload(PickArtifact)
      .addSuccess(ArtifactCreated, { status: 201 })
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN", "ARTIFACT_INSTANCE_QUOTA_EXCEEDED", "NOT_IMPLEMENTED"))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.post("writeChunk", `${widgetPrefix}/artifacts/:artifactId/chunks`)
      .setPath(WidgetArtifactPath)
      .setPayload(WriteChunk)
      .addSuccess(ChunkWritten)
      .addSuccess(WriteApprovalRequired, { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "POLICY_REFUSED", "INSTANCE_UNKNOWN", "ARTIFACT_NOT_FOUND",
        "ARTIFACT_INSTANCE_QUOTA_EXCEEDED", "APPROVALS_PENDING", "NOT_IMPLEMENTED"
      ))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("finalize", `${widgetPrefix}/artifacts/:artifactId/finalize`)
      .setPath(WidgetArtifactPath)
      .addSuccess(Finalized)
      .addSuccess(WriteApprovalRequired, { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "POLICY_REFUSED", "INSTANCE_UNKNOWN", "ARTIFACT_NOT_FOUND", "APPROVALS_PENDING",
        "NOT_IMPLEMENTED"
      ))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("attach", `${widgetPrefix}/artifacts/:artifactId/attach`)
      .setPath(WidgetArtifactPath)
      .setPayload(AttachArtifact)
      .addSuccess(Attached, { status: 201 })
      .addSuccess(WriteApprovalRequired, { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "POLICY_REFUSED", "INSTANCE_UNKNOWN", "ARTIFACT_NOT_FOUND", "ARTIFACT_NOT_FINALIZED",
        "APPROVALS_PENDING", "NOT_IMPLEMENTED"
      ))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.del("discard", `${widgetPrefix}/artifacts/:artifactId`)
      .setPath(WidgetArtifactPath)
      .addSuccess(Discarded)
      .addSuccess(WriteApprovalRequired, { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "POLICY_REFUSED", "ARTIFACT_NOT_CREATOR", "INSTANCE_UNKNOWN", "ARTIFACT_NOT_FOUND",
        "APPROVALS_PENDING", "NOT_IMPLEMENTED"
      ))
      .middleware(Authenticated)
  )
{}

export class ArtifactsGroup extends HttpApiGroup.make("artifacts")
  .add(
    HttpApiEndpoint.get("get", "/artifacts/:artifactId")
      .setPath(ArtifactPath)
      .addSuccess(Artifact)
      .addError(refusals("INVALID_INPUT", "ARTIFACT_NOT_FOUND", "NOT_IMPLEMENTED"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("content", "/artifacts/:artifactId/content")
      .setPath(ArtifactPath)
      .addSuccess(ArtifactBytes)
      .addError(refusals(
        "INVALID_INPUT", "PERSON_ONLY", "ARTIFACT_NOT_FOUND", "ARTIFACT_NOT_FINALIZED", "NOT_IMPLEMENTED"
      ))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("export", "/artifacts/:artifactId/export")
      .setPath(ArtifactPath)
      .setPayload(ExportArtifact)
      .addSuccess(ArtifactBytes)
      .addError(refusals("INVALID_INPUT", "ARTIFACT_NOT_FOUND", "ARTIFACT_NOT_FINALIZED", "NOT_IMPLEMENTED"))
      .middleware(PersonOnly)
  )
{}
