/**
 * What the bytes are: the container sniffed by file-type must be the one the
 * declared type names, and music-metadata must read a length of at most one
 * hour from it.
 */
import { Effect } from "effect"
import { fileTypeFromBuffer } from "file-type"
import { parseBuffer } from "music-metadata"
import { mediaRefused, type MediaRefused } from "../../../services/node/MediaFetcher.js"
import { type AudioType, containerAgrees, maxDurationSeconds } from "./Policy.js"

/** The duration in seconds of a file that passes. */
export const inspectAudio = (declared: AudioType, bytes: Uint8Array): Effect.Effect<number, MediaRefused> =>
  Effect.gen(function*() {
    const sniffed = yield* Effect.tryPromise(() => fileTypeFromBuffer(bytes)).pipe(
      Effect.orElseSucceed(() => undefined)
    )
    if (!containerAgrees(declared, sniffed?.ext)) {
      return yield* Effect.fail(mediaRefused("type-mismatch", `The bytes are not ${declared}`))
    }
    const metadata = yield* Effect.tryPromise(() =>
      parseBuffer(bytes, { mimeType: declared, size: bytes.byteLength }, { duration: true, skipCovers: true })
    ).pipe(Effect.option)
    const duration = metadata._tag === "Some" ? metadata.value.format.duration : undefined
    if (duration === undefined || !Number.isFinite(duration) || duration < 0) {
      return yield* Effect.fail(mediaRefused("duration-unknown", "The file does not state its length"))
    }
    if (duration > maxDurationSeconds) {
      return yield* Effect.fail(mediaRefused("too-long", `The file is longer than ${maxDurationSeconds / 60} minutes`))
    }
    return duration
  })
