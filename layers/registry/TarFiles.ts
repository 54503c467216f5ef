/**
 * A verified tarball read without touching disk: the same decompression and listing pass as an install
 * (Unpack.ts: every limit, links, devices and escaping paths refused), keeping the bytes of the few files the
 * caller names as that pass reads them. Nothing is written, so nothing can land outside a folder.
 */
import { Effect } from "effect"
import type { TarballRefused } from "../../services/registry/RegistryErrors.js"
import { decompress, inspect, type Limits, type Refuse, type TarListing } from "./Unpack.js"

export type { TarListing } from "./Unpack.js"

export const readTarball = (
  tarball: Buffer,
  limits: Limits,
  refuse: Refuse,
  keep: (path: string) => boolean
): Effect.Effect<TarListing, TarballRefused> =>
  Effect.flatMap(decompress(tarball, limits, refuse), (tarBytes) => inspect(tarBytes, limits, refuse, keep))
