/**
 * BENCH_TOOLS_TRACE=<file>: the time line of the write rounds for finding what a slow record coincided with. Each
 * record timed inside a write call (the node's and the baseline's) with its start, and every garbage collection of
 * the process, in epoch milliseconds (`performance.timeOrigin` + the performance clock), so that they line up with
 * `strace -tt` (or `-ttt`) of the same run.
 */
import * as fs from "node:fs"
import { type PerformanceEntry, PerformanceObserver } from "node:perf_hooks"

export interface Span {
  readonly what: string
  /** Epoch milliseconds. */
  readonly at: number
  readonly wall: number
}

const file = process.env.BENCH_TOOLS_TRACE
const spans: Array<Span> = []
let observer: PerformanceObserver | undefined

/** Starts keeping garbage collections (only when tracing). */
export const start = () => {
  if (file === undefined || observer !== undefined) return
  observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { readonly detail?: { readonly kind?: number } }).detail?.kind ?? "?"
      spans.push({ what: `gc-${kind}`, at: performance.timeOrigin + entry.startTime, wall: entry.duration })
    }
  })
  observer.observe({ entryTypes: ["gc"] })
}

/** Keeps one span (only when tracing); `started` is `performance.now()` at its start. */
export const keep = (what: string, started: number, wall: number) => {
  if (file !== undefined) spans.push({ what, at: performance.timeOrigin + started, wall })
}

/** Writes the spans kept, in order of start. */
export const write = () => {
  if (file === undefined) return
  observer?.disconnect()
  spans.sort((a, b) => a.at - b.at)
  fs.writeFileSync(file, spans.map((span) => JSON.stringify(span)).join("\n") + "\n")
}
