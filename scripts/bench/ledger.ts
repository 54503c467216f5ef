/**
 * What a write call's ledger record costs (issue 14's target: ≤ 1 ms p99): `Ledger.record` on a real file with
 * its synchronous commit, against the same layer committing with `synchronous = NORMAL` (the main database's
 * setting) and the bare INSERT through the driver at both levels, in the same run and interleaved call by call
 * so the machine's moods hit every variant alike. Prints a Markdown table.
 *
 *   node --import tsx scripts/bench/ledger.ts            # N = 2000 calls per variant
 *   LEDGER_BENCH_N=10000 node --import tsx scripts/bench/ledger.ts
 *
 * `benchLedger` is exported for a benchmark that runs it among others.
 */
import { Context, Effect, Layer } from "effect"
import { createRequire } from "node:module"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as SqlLedger from "../../layers/node/ledger/SqlLedger.js"
import * as NodeDatabase from "../../layers/node/sql/NodeDatabase.js"
import { Ledger, type NewEffect } from "../../services/node/Ledger.js"
import { percentile, positiveInt } from "./Common.js"

interface Statement {
  run(...params: Array<unknown>): unknown
}
interface Driver {
  pragma(text: string): unknown
  exec(text: string): void
  prepare(text: string): Statement
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new(file: string) => Driver

export interface LedgerFigures {
  readonly variant: string
  readonly p50: number
  readonly p99: number
  readonly max: number
}

const effect: NewEffect = {
  taskId: "task_bench",
  conversationId: "conv_bench",
  packageId: "@clark-examples/notes-service",
  packageDigest: `sha256:${"a".repeat(64)}`,
  tool: "add_note",
  risk: "local-write",
  origin: "person",
  input: { title: "Groceries", body: "eggs, milk, bread" },
  summary: "notes-service · add_note"
}

const ledgerOn = (dir: string, synchronous: "FULL" | "NORMAL") =>
  Effect.map(
    Layer.build(SqlLedger.layer(dir, { synchronous }).pipe(Layer.provide(NodeDatabase.layer(dir)))),
    (context) => Context.get(context, Ledger)
  )

/** The same row through the driver alone, on a file of its own opened as the ledger opens its file. */
const bareInsert = (dir: string, synchronous: "FULL" | "NORMAL") => {
  fs.mkdirSync(dir, { recursive: true })
  const db = new Database(path.join(dir, "bare.sqlite"))
  db.pragma("journal_mode = WAL")
  db.pragma(`synchronous = ${synchronous}`)
  db.exec(`CREATE TABLE effects (id TEXT PRIMARY KEY, task_id TEXT, conversation_id TEXT, package_id TEXT,
    package_digest TEXT, tool TEXT, risk TEXT, origin TEXT, input TEXT, summary TEXT, status TEXT, may_have_run INTEGER,
    recorded_at TEXT)`)
  const insert = db.prepare("INSERT INTO effects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'sent', 1, ?)")
  let seq = 0
  return {
    run: () =>
      insert.run(`eff_${seq++}`, effect.taskId, effect.conversationId, effect.packageId, effect.packageDigest, effect.tool,
        effect.risk, effect.origin, JSON.stringify(effect.input), effect.summary, new Date().toISOString()),
    close: () => db.close()
  }
}

const figures = (variant: string, samples: Array<number>): LedgerFigures => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { variant, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1]! }
}

/** `n` records per variant, after `warmup` unmeasured ones; the files live in a temporary folder, removed after. */
export const benchLedger = (options: { readonly n?: number; readonly warmup?: number } = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const n = options.n ?? 2000
    const warmup = options.warmup ?? 200
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-ledger-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true })))
    const full = yield* ledgerOn(path.join(root, "full"), "FULL")
    const normal = yield* ledgerOn(path.join(root, "normal"), "NORMAL")
    const bareFull = bareInsert(path.join(root, "bare-full"), "FULL")
    const bareNormal = bareInsert(path.join(root, "bare-normal"), "NORMAL")
    yield* Effect.addFinalizer(() => Effect.sync(() => (bareFull.close(), bareNormal.close())))

    const samples = { full: [] as Array<number>, normal: [] as Array<number>, bareFull: [] as Array<number>, bareNormal: [] as Array<number> }
    const timed = (ledger: Ledger["Type"]) =>
      Effect.gen(function*() {
        const started = performance.now()
        yield* Effect.orDie(ledger.record(effect))
        return performance.now() - started
      })
    const timedBare = (bare: { run: () => unknown }) => {
      const started = performance.now()
      bare.run()
      return performance.now() - started
    }
    for (let i = 0; i < warmup + n; i++) {
      const measured = i >= warmup
      const a = yield* timed(full)
      const b = yield* timed(normal)
      const c = timedBare(bareFull)
      const d = timedBare(bareNormal)
      if (measured) {
        samples.full.push(a)
        samples.normal.push(b)
        samples.bareFull.push(c)
        samples.bareNormal.push(d)
      }
    }
    return {
      n,
      rows: [
        figures("`Ledger.record`, synchronous = FULL (the ledger)", samples.full),
        figures("`Ledger.record`, synchronous = NORMAL (baseline)", samples.normal),
        figures("bare INSERT through the driver, FULL", samples.bareFull),
        figures("bare INSERT through the driver, NORMAL", samples.bareNormal)
      ]
    }
  }))

export const markdown = (result: { readonly n: number; readonly rows: ReadonlyArray<LedgerFigures> }) =>
  [
    `Ledger record, ${result.n} calls per variant, WAL, one file each (ms)`,
    "",
    "| variant | p50 | p99 | max |",
    "| --- | --- | --- | --- |",
    ...result.rows.map((row) => `| ${row.variant} | ${row.p50.toFixed(3)} | ${row.p99.toFixed(3)} | ${row.max.toFixed(3)} |`)
  ].join("\n")

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const n = positiveInt("LEDGER_BENCH_N", 2000)
  Effect.runPromise(benchLedger({ n })).then(
    (result) => {
      console.log(markdown(result))
      const target = result.rows[0]!.p99 <= 1
      console.log(`\nTarget (issue 14): a write call's ledger record ≤ 1 ms p99: ${target ? "met" : "NOT met"}`)
    },
    (error) => {
      console.error(error)
      process.exitCode = 1
    }
  )
}
