/**
 * The installed record of a package as the presses read it: every press checks that its widget's package is still
 * installed as it was placed, and decoding the record's manifest was most of that read. The records' revision moves
 * with every install this process records (the only writer of installed packages), so a record is read again once
 * the revision moved; the revision is read before the row, so a row read during an install is never kept past it.
 */
import { Effect, Option, Ref } from "effect"
import { type InstalledPackage, PackageRecords } from "../../../services/node/PackageRecords.js"

interface Held {
  readonly revision: number
  readonly byId: ReadonlyMap<string, Option.Option<InstalledPackage>>
}

export const make = Effect.gen(function*() {
  const records = yield* PackageRecords
  const held = yield* Ref.make<Held>({ revision: -1, byId: new Map() })
  return Effect.fnUntraced(function*(packageId: string) {
    const revision = yield* records.revision
    const now = yield* Ref.get(held)
    const hit = now.revision === revision ? now.byId.get(packageId) : undefined
    if (hit !== undefined) return hit
    const found = yield* records.installedOne(packageId)
    yield* Ref.update(held, (current) =>
      current.revision === revision
        ? { revision, byId: new Map(current.byId).set(packageId, found) }
        : current.revision < revision
        ? { revision, byId: new Map([[packageId, found]]) }
        : current)
    return found
  })
})
