/** The tables of `npm run bench:tools` (scripts/bench/tools.ts) and what they say, as its docs/benchmarks.md section. */
import * as os from "node:os"
import { otherWorkLimit } from "../Common.js"
import { type LedgerFigures, markdown as ledgerMarkdown } from "../ledger.js"

export interface Figures {
  readonly p50: number
  readonly p99: number
  readonly max: number
  /** Median CPU time of this process (the node, or the SDK client) per call, in ms: what load cannot stretch. */
  readonly cpu: number
}

export interface Results {
  readonly read: { readonly direct: Figures; readonly node: Figures; readonly twin: Figures; readonly before?: Figures }
  readonly write: {
    readonly noLedger: Figures
    readonly ledger: Figures
    readonly record: Figures
    /** The baseline node's write call and its record, when a baseline ran. */
    readonly before?: Figures
    readonly beforeRecord?: Figures
  }
  readonly breakdown: ReadonlyArray<readonly [string, Figures]>
  readonly turns: { readonly plain: Figures; readonly tool: Figures } | undefined
  readonly ledgerBench: { readonly n: number; readonly rows: ReadonlyArray<LedgerFigures> }
}

const ms = (value: number) => value.toFixed(3)
const row = (what: string, f: Figures) => `| ${what} | ${ms(f.p50)} | ${ms(f.p99)} | ${ms(f.max)} | ${ms(f.cpu)} |`
const verdict = (met: boolean) => (met ? "met" : "**not met**")

export interface Settings {
  readonly n: number
  readonly writes: number
  readonly turns: number
  readonly warmup: number
  /** Cores of other work before the runs. */
  readonly otherWork: number
  /** The load averages, as `uptime` shows them. */
  readonly load: string
  /** BENCH_BASELINE_REF's commit, when a baseline node ran beside this one. */
  readonly baseline?: string
}

/** The section of docs/benchmarks.md. */
export const report = (results: Results, settings: Settings) => {
  const { baseline, load, n, otherWork, turns, warmup, writes } = settings
  const readAdded = results.read.node.p99 - results.read.direct.p99
  const before = results.read.before
  const beforeRow = before === undefined ? "" : `\n${row(`the same call on the baseline node, ${baseline ?? "before"} (loaded into this process)`, before)}`
  const beforeText = before === undefined ? "" : ` The baseline node adds ${ms(before.p50 - results.read.direct.p50)} ms at p50 and ${ms(before.p99 - results.read.direct.p99)} ms at p99 in the same rounds; CPU per call ${ms(before.cpu)} ms against ${ms(results.read.node.cpu)} ms now.`
  const writeAdded = results.write.ledger.p99 - results.write.noLedger.p99
  const { before: writeBefore, beforeRecord } = results.write
  const writeBeforeRows = writeBefore === undefined || beforeRecord === undefined ? "" : `
${row(`the same call on the baseline node, ${baseline ?? "before"}, over its ledger`, writeBefore)}
${row("its `Ledger.record` (the baseline's), timed inside those calls", beforeRecord)}`
  const writeBeforeText = beforeRecord === undefined ? "" : ` The baseline's record in the same rounds: ${ms(beforeRecord.p50)} ms p50, ${ms(beforeRecord.p99)} ms p99, CPU ${ms(beforeRecord.cpu)} ms per record against ${ms(results.write.record.cpu)} ms now.`
  const breakdownTable = results.breakdown.length === 0 ? "" : `
Where it goes: the pieces of that call, each alone, ${Math.max(1, Math.floor(n / 4)).toLocaleString("en-US")} times, interleaved the same way (ms):

| piece | p50 | p99 | max | CPU per call, p50 |
| --- | ---: | ---: | ---: | ---: |
${results.breakdown.map(([what, f]) => row(what, f)).join("\n")}
`
  const turnsTable = results.turns === undefined ? "" : `
Whole turns over HTTP (for information), ${turns} each, the waiting route with the person's headers, a new conversation per pair:

| turn | p50 | p99 | max | CPU per turn, p50 |
| --- | ---: | ---: | ---: | ---: |
${row("model answers at once", results.turns.plain)}
${row("model calls `probe-service__read_value`, then answers", results.turns.tool)}

A turn with a tool call adds the call (row 2 above), its \`tool-start\` / \`tool-end\` events, the tool block in the
timeline and a second model step: ${ms(results.turns.tool.p50 - results.turns.plain.p50)} ms at p50, ${ms(results.turns.tool.p99 - results.turns.plain.p99)} ms at p99.
`
  return `## Package tools

\`npm run bench:tools\` (scripts/bench/tools.ts), ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "unknown"}), shared with other jobs.

- The node built in-process from its own layers on a temporary data dir (real MCP runtime, SQLite stores, effect ledger with synchronous commits), the probe service package bundled into an installable copy and installed through the node's routes. The direct baseline is the SDK \`Client\` over \`StdioClientTransport\` on its own process of the same copy.
- ${n.toLocaleString("en-US")} read calls and ${writes.toLocaleString("en-US")} write calls per variant after ${warmup} unmeasured, sequential, the variants interleaved call by call (which goes first alternates). "CPU per call" is the median CPU time of the benchmark's process (the node, or the SDK client) during one call, all its threads: load stretches it far less than the wall times.
- Load: \`uptime\` ${load}; other work before the runs ${otherWork.toFixed(2)} cores of CPU${otherWork > otherWorkLimit ? " (**more than a quarter of a core: the figures are understated**)" : ""}.

Read tool, times in ms:

| call | p50 | p99 | max | CPU per call, p50 |
| --- | ---: | ---: | ---: | ---: |
${row("SDK client → probe `read_value` (direct)", results.read.direct)}
${row("`PackageTools.call` → runtime → MCP stdio → probe (the node)", results.read.node)}
${row("a second SDK client → its own probe process (direct again, the noise floor)", results.read.twin)}${beforeRow}

Added by the node: ${ms(results.read.node.p50 - results.read.direct.p50)} ms at p50, ${ms(readAdded)} ms at p99. Target ≤ 2 ms p99: ${verdict(readAdded <= 2)}. The same call on two identical direct paths differs by ${ms(Math.abs(results.read.twin.p99 - results.read.direct.p99))} ms at p99 in this run: a difference of p99s smaller than that is not the node's.${beforeText}
${breakdownTable}
Write tool (\`write_value\`, risk local-write), times in ms:

| call | p50 | p99 | max | CPU per call, p50 |
| --- | ---: | ---: | ---: | ---: |
${row("`PackageTools.call` over a ledger that stores nothing", results.write.noLedger)}
${row("`PackageTools.call` over the node's ledger (record and answer)", results.write.ledger)}
${row("its `Ledger.record`, timed inside those calls", results.write.record)}${writeBeforeRows}

The ledger's record inside the call: ${ms(results.write.record.p99)} ms p99 (the whole call, record and answer, ${ms(writeAdded)} ms more at p99 than without a ledger). Target ≤ 1 ms p99: ${verdict(results.write.record.p99 <= 1)}.${writeBeforeText}

${ledgerMarkdown(results.ledgerBench)}
${turnsTable}
What the figures say (profiles of the read part under \`node --cpu-prof\` on this machine, 2026-11-25 and 2026-11-27;
docs/decisions.md, "The node's own cost per package tool call"):

- The node's own logic in a call (catalogue, Ajv input check, policy) is under 0.1 ms of CPU. Around the same SDK
  call the service runtime holds the service's slot once per call (a read and a write alike; a write reaches the
  service and sends on that one hold), forks no idle timer (one idle watcher per running service) and one timer
  fiber for the call's deadline; a call without progress has no queue or scope, and its span captures no stack
  trace. On the main database a read call runs one statement, the audit row: the execution preferences come from
  the store's memory (decoded again only when they changed), the grant lookup runs only for a step that asks.
  The SDK transport's write to the service's stdin pipe is the largest single cost in the profile and is paid by
  both sides alike. The calls here run under the default tracer (spans made, as with \`CLARK_TRACING=on\`).
- With other jobs keeping both cores busy, the p99 of both paths is scheduling delay tens of ms long, so the p99
  difference measures the machine's load more than the node; the CPU column is the node's own cost.
- The ledger's record is an fsync of its WAL per record (\`synchronous = FULL\`, docs/decisions.md, "Effect ledger
  and unknown effects"): its time is the disk's, here shared with other jobs' writes; the NORMAL and bare-driver
  rows show the same record without the fsync.
`
}
