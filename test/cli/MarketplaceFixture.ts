/**
 * Shared by the Marketplace.*.test.ts files: the `clark marketplace` command
 * with a clean environment, queries on the database it wrote, a temporary
 * folder per test file, and the catalogue document the commands import.
 */
import { afterAll, beforeAll } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Database from "../../layers/marketplace/sql/Database.js"
import * as TokenFormat from "../../services/marketplace/TokenFormat.js"
import { runClark } from "../support/Cli.js"

/** Each command is killed after this long. */
export const commandTimeout = 90_000
export const slow = 120_000

/** The environment of every command: no database chosen unless a test says so. */
export const baseEnv = (extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const {
    LOG_FORMAT: _f,
    LOG_LEVEL: _l,
    MARKETPLACE_DATABASE: _d,
    MARKETPLACE_PORT: _p,
    MARKETPLACE_PUBLIC_ORIGIN: _o,
    ...rest
  } = process.env
  return { ...rest, ...extra }
}

export const clark = (
  args: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string>>; readonly cwd?: string } = {}
) =>
  runClark(["marketplace", ...args], { env: baseEnv(options.env ?? {}), timeout: commandTimeout, cwd: options.cwd })

/** Runs a query on a database URL with the product's own client (no migrations run). */
export const query = <A>(url: string, use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(SqlClient.SqlClient, use).pipe(
    Effect.provide(Database.client(Database.parseDatabaseUrl(url)!))
  )))

export const countRows = (url: string, table: string) =>
  query(url, (sql) =>
    sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM ${sql(table)}`.pipe(Effect.map(([row]) => Number(row?.n))))

export const packageNames = (url: string) =>
  query(url, (sql) =>
    sql<{ name: string }>`SELECT name FROM packages ORDER BY name`.pipe(Effect.map((rows) => rows.map((r) => r.name))))

export let tmp: string
export const sqliteUrl = (name: string) => `sqlite:${path.join(tmp, name)}`
/** What every command that opens a database says on stderr first. */
export const databaseLine = (url: string) => `Database: ${url}\n`
export const writeJson = (name: string, value: unknown) => {
  const file = path.join(tmp, name)
  fs.writeFileSync(file, JSON.stringify(value))
  return file
}
/** A temporary folder for the calling test file's databases and documents, removed after it. */
export const useTempDir = () => {
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-cli-"))
  })
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))
}

export const version = (v: string, at: string) => ({ version: v, publishedAt: at, indexedAt: at, registryIntegrity: `sha512-${v}` })
export const document = {
  categories: [{ slug: "tools", name: "Tools" }],
  publishers: [{ slug: "acme", name: "Acme" }],
  packages: [
    { name: "alpha", displayName: "Alpha", publisher: "acme", categorySlug: "tools", curationStatus: "listed", versions: [version("1.0.0", "2024-01-01T00:00:00Z")] },
    { name: "beta", displayName: "Beta", curationStatus: "featured", versions: [version("0.1.0", "2024-02-01T00:00:00Z"), version("0.2.0", "2024-03-01T00:00:00Z")] }
  ]
}

export interface OAuthRow {
  readonly tokenHash: string
  readonly audience: string
  readonly clientId: string
  readonly scopes: string
  readonly createdAt: string
  readonly expiresAt: string
}

export const oauthTokens = (url: string) =>
  query(url, (sql) =>
    sql<OAuthRow>`SELECT t.token_hash, t.audience, g.client_id, g.scopes, t.created_at, t.expires_at
      FROM oauth_access_tokens t JOIN oauth_grants g ON g.id = t.grant_id`)

/** The stored row of a token, found by its hash. */
export const oauthRow = (rows: ReadonlyArray<OAuthRow>, token: string) => rows.find((row) => row.tokenHash === TokenFormat.hash(token))

export const lifetimeMillis = (row: OAuthRow | undefined) => Date.parse(row?.expiresAt ?? "") - Date.parse(row?.createdAt ?? "")

export const memberships = (url: string) =>
  query(url, (sql) =>
    sql<{ slug: string; email: string; role: string }>`SELECT p.slug, u.email, m.role
      FROM publisher_members m JOIN publishers p ON p.id = m.publisher_id JOIN users u ON u.id = m.user_id
      ORDER BY p.slug, u.email`)

export const oauthTokenPattern = /^cmo_[0-9A-Za-z]{38}\n$/
