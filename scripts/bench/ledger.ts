/**
 * What a write call's ledger record costs (issue 14's target: ≤ 1 ms p99): `Ledger.record` on a real file with
 * its synchronous commit, against the same layer committing with `synchronous = NORMAL` (the main database's
 * setting) and the bare INSERT through the driver at both levels, in the same run and interleaved call by call
 * so the machine's moods hit every variant alike; with a baseline (another commit's ledger, given by
 * scripts/bench/tools.ts under BENCH_BASELINE_REF), its `record` with `FULL` too. Prints a Markdown table with
 * wall times and the median CPU time of this process per record (what the machine's load stretches least).
 *
 *   node --import tsx scripts/bench/ledger.ts            # N = 2000 calls per variant
 *   LEDGER_BENCH_N=10000 node --import tsx scripts/bench/ledger.ts
 *
 * `benchLedger` is exported for a benchmark that runs it among others.
 */
import { Context, Effect, Layer, type Scope } from "effect"
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
  /** Median CPU time of this process per record, in ms. */
  readonly cpu: number
}

/** What the benchmark needs of a ledger: its `record` (a baseline commit's ledger has its own types). */
export interface Recording {
  readonly record: (effect: NewEffect) => Effect.Effect<unknown, unknown>
  readonly answer: (effectId: string, answer: { readonly isError: boolean; readonly output: unknown }) => Effect.Effect<unknown, unknown>
}

/** A baseline commit's ledger on `dir`, committing with `FULL`. */
export type BaselineLedger = (dir: string) => Effect.Effect<Recording, never, Scope.Scope>

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

interface Sample {
  readonly wall: number
  readonly cpu: number
}

const figures = (variant: string, samples: Array<Sample>): LedgerFigures => {
  const sorted = samples.map((s) => s.wall).sort((a, b) => a - b)
  const cpu = samples.map((s) => s.cpu).sort((a, b) => a - b)
  return {
    variant,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1]!,
    cpu: percentile(cpu, 0.5)
  }
}

const cpuNow = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/** `n` records per variant, after `warmup` unmeasured ones; the files live in a temporary folder, removed after. */
export const benchLedger = (
  options: { readonly n?: number; readonly warmup?: number; readonly baseline?: BaselineLedger | undefined } = {}
) =>
  Effect.scoped(Effect.gen(function*() {
    const n = options.n ?? 2000
    const warmup = options.warmup ?? 200
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-ledger-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true })))
    const full = yield* ledgerOn(path.join(root, "full"), "FULL")
    const normal = yield* ledgerOn(path.join(root, "normal"), "NORMAL")
    const before = options.baseline === undefined ? undefined : yield* options.baseline(path.join(root, "before"))
    const answered = yield* ledgerOn(path.join(root, "answered"), "FULL")
    const beforeAnswered = options.baseline === undefined ? undefined : yield* options.baseline(path.join(root, "before-answered"))
    const bareFull = bareInsert(path.join(root, "bare-full"), "FULL")
    const bareNormal = bareInsert(path.join(root, "bare-normal"), "NORMAL")
    yield* Effect.addFinalizer(() => Effect.sync(() => (bareFull.close(), bareNormal.close())))

    const timed = (ledger: Recording) =>
      Effect.suspend(() => {
        const cpu = cpuNow()
        const started = performance.now()
        return Effect.as(Effect.orDie(ledger.record(effect)), undefined).pipe(
          Effect.map((): Sample => ({ wall: performance.now() - started, cpu: cpuNow() - cpu }))
        )
      })
    // As a call makes them: the record (timed), then its answer (not timed), so that whatever a ledger does at
    // an answer lands where it lands in a call.
    const timedAnswered = (ledger: Recording) =>
      Effect.suspend(() => {
        const cpu = cpuNow()
        const started = performance.now()
        return Effect.flatMap(Effect.orDie(ledger.record(effect)), (stored) => {
          const sample: Sample = { wall: performance.now() - started, cpu: cpuNow() - cpu }
          return Effect.as(Effect.orDie(ledger.answer((stored as { effectId: string }).effectId, { isError: false, output: "ok" })), sample)
        })
      })
    const timedBare = (bare: { run: () => unknown }) =>
      Effect.sync((): Sample => {
        const cpu = cpuNow()
        const started = performance.now()
        bare.run()
        return { wall: performance.now() - started, cpu: cpuNow() - cpu }
      })
    const variants: ReadonlyArray<readonly [string, Effect.Effect<Sample>]> = [
      ["`Ledger.record`, synchronous = FULL (the ledger)", timed(full)],
      ...(before === undefined ? [] : [["`Ledger.record` of the baseline commit, FULL (before)", timed(before)] as const]),
      ["`Ledger.record` followed by its `answer` (untimed), as in a call, FULL", timedAnswered(answered)],
      ...(beforeAnswered === undefined
        ? []
        : [["`Ledger.record` followed by its `answer` (untimed), baseline commit, FULL", timedAnswered(beforeAnswered)] as const]),
      ["`Ledger.record`, synchronous = NORMAL (no fsync)", timed(normal)],
      ["bare INSERT through the driver, FULL", timedBare(bareFull)],
      ["bare INSERT through the driver, NORMAL", timedBare(bareNormal)]
    ]
    const samples = variants.map(() => [] as Array<Sample>)
    for (let i = 0; i < warmup + n; i++) {
      // Which variant goes first turns with the round: none always follows another's fsync.
      for (let j = 0; j < variants.length; j++) {
        const k = (i + j) % variants.length
        const sample = yield* variants[k]![1]
        if (i >= warmup) samples[k]!.push(sample)
      }
    }
    return { n, rows: variants.map(([variant], k) => figures(variant, samples[k]!)) }
  }))

export const markdown = (result: { readonly n: number; readonly rows: ReadonlyArray<LedgerFigures> }) =>
  [
    `Ledger record, ${result.n} calls per variant, WAL, one file each (ms)`,
    "",
    "| variant | p50 | p99 | max | CPU per record, p50 |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...result.rows.map((row) =>
      `| ${row.variant} | ${row.p50.toFixed(3)} | ${row.p99.toFixed(3)} | ${row.max.toFixed(3)} | ${row.cpu.toFixed(3)} |`
    )
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
