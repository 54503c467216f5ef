/**
 * A verified tarball read without touching disk: the same decompression and listing pass as an install
 * (Unpack.ts: every limit, links, devices and escaping paths refused), then one more parse that keeps the
 * bytes of the few files the caller names. Nothing is written, so nothing can land outside a folder.
 */
import { Effect } from "effect"
import * as tar from "tar"
import type { TarballRefused } from "../../services/registry/RegistryErrors.js"
import { decompress, inspect, type Limits, type Refuse } from "./Unpack.js"

export interface TarListing {
  /** Every file's path below npm's `package/` folder. */
  readonly files: ReadonlySet<string>
  /** The bytes of the files `keep` admitted. */
  readonly kept: ReadonlyMap<string, Buffer>
}

const below = (raw: string) => raw.split("/").filter((part) => part !== "" && part !== ".").slice(1).join("/")

export const readTarball = (
  tarball: Buffer,
  limits: Limits,
  refuse: Refuse,
  keep: (path: string) => boolean
): Effect.Effect<TarListing, TarballRefused> =>
  Effect.gen(function*() {
    const tarBytes = yield* decompress(tarball, limits, refuse)
    yield* inspect(tarBytes, limits, refuse)
    return yield* Effect.async<TarListing, TarballRefused>((resume) => {
      const files = new Set<string>()
      const kept = new Map<string, Buffer>()
      const parser = new tar.Parser({
        strict: true,
        brotli: false,
        zstd: false,
        onReadEntry: (entry) => {
          const path = below(entry.path)
          if (entry.type === "Directory" || path === "") return void entry.resume()
          files.add(path)
          if (!keep(path)) return void entry.resume()
          const chunks: Array<Buffer> = []
          entry.on("data", (chunk: Buffer) => void chunks.push(chunk))
          entry.on("end", () => void kept.set(path, Buffer.concat(chunks)))
        }
      })
      parser.on("error", () => resume(Effect.fail(refuse("malformed"))))
      parser.on("end", () => resume(Effect.succeed({ files, kept })))
      parser.end(tarBytes)
    })
  })
