/**
 * The marketplace database of `--database`, else of `MARKETPLACE_DATABASE`, else `sqlite:./data/marketplace.db`;
 * loaded only by the commands that use it. Every command says on stderr which database it used (stdout stays for
 * what scripts capture, such as a new token). A command that needs existing data refuses a database that does not
 * hold the marketplace's schema instead of creating an empty one: run from another folder, the default relative
 * path used to make a fresh `./data/marketplace.db` there and answer "No account with the email …" from it.
 */
import { SqlClient } from "@effect/sql"
import { Console, Effect, Layer, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import { migrate } from "../../../layers/marketplace/sql/Migrations.js"

/** `create`: the command may make the database (migrate, seed, import, serve); `existing`: it must be there. */
export type Need = "create" | "existing"

/** How the database is named to the operator: an absolute SQLite path, a PostgreSQL URL without its password. */
export const describe = (url: Database.DatabaseUrl): string => {
  if (url._tag === "Sqlite") return `sqlite:${url.filename === ":memory:" ? url.filename : path.resolve(url.filename)}`
  try {
    const parsed = new URL(Redacted.value(url.url))
    parsed.password = ""
    return parsed.toString()
  } catch {
    return "postgres://…"
  }
}

const resolveUrl = (option: Option.Option<string>): Effect.Effect<Database.DatabaseUrl, Error> =>
  Option.match(option, {
    onNone: () => Effect.mapError(Database.DatabaseUrlConfig, (error) => new Error(String(error))),
    onSome: (value) => {
      const url = Database.parseDatabaseUrl(value)
      return url === undefined ? Effect.fail(new Error("--database must be sqlite:PATH or postgres://…")) : Effect.succeed(url)
    }
  })

/** The migration table, present once the schema was made (by any command that may create it). */
const hasSchema = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.onDialectOrElse({
    pg: () => sql<{ present: unknown }>`SELECT to_regclass('clark_migrations') IS NOT NULL AS present`,
    orElse: () => sql<{ present: unknown }>`SELECT COUNT(*) > 0 AS present FROM sqlite_master WHERE name = 'clark_migrations'`
  })).pipe(Effect.map(([row]) => row?.present === true || row?.present === 1), Effect.orDie)

const sqliteHeader = Buffer.from("SQLite format 3\0", "latin1")

/** Whether `filename` is a SQLite database (by its header), read without opening it as one. */
const isSqliteFile = (filename: string): boolean => {
  try {
    const fd = fs.openSync(filename, "r")
    try {
      const head = Buffer.alloc(sqliteHeader.length)
      return fs.readSync(fd, head, 0, head.length, 0) === head.length && head.equals(sqliteHeader)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return false
  }
}

const missing = (described: string) =>
  new Error(
    `No marketplace database at ${described}. Create one with \`clark marketplace admin migrate\` (or seed, import), ` +
      "or choose an existing one with --database or MARKETPLACE_DATABASE."
  )

/** The connected, migrated database, after saying which one it is; `existing` refuses one without the schema. */
export const databaseLayer = (option: Option.Option<string>, need: Need = "create"): Layer.Layer<SqlClient.SqlClient, Error> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const url = yield* resolveUrl(option)
    const described = describe(url)
    yield* Console.error(`Database: ${described}`)
    if (need === "create") return Database.layer(url)
    // Opening a SQLite file creates it, and writes to an empty one: look first.
    if (url._tag === "Sqlite" && url.filename !== ":memory:" && !isSqliteFile(url.filename)) {
      return Layer.fail(missing(described))
    }
    const checked = Effect.flatMap(hasSchema, (present) => (present ? Effect.orDie(migrate) : Effect.fail(missing(described))))
    return Layer.effectDiscard(checked).pipe(Layer.provideMerge(Database.client(url)))
  }))
