/** The marketplace's SQLite connection as `Database.client` opens it: a real file, the settings it runs with. */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { client, parseDatabaseUrl } from "../../layers/marketplace/sql/Database.js"

describe("the marketplace's SQLite connection", () => {
  it.effect("keeps a 32 MiB page cache and enforces foreign keys", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-sqlite-settings-"))
      const url = parseDatabaseUrl(`sqlite:${path.join(dir, "marketplace.db")}`)!
      const read = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const cache = yield* sql.unsafe<{ cache_size: number }>("PRAGMA cache_size").withoutTransform
        const keys = yield* sql.unsafe<{ foreign_keys: number }>("PRAGMA foreign_keys").withoutTransform
        return { cache: cache[0]!.cache_size, keys: keys[0]!.foreign_keys }
      })
      const settings = yield* read.pipe(Effect.provide(client(url)), Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))))
      expect(settings).toEqual({ cache: -32768, keys: 1 })
    }))
})
