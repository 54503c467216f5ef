/**
 * How `npm run bench:tools` times a call: wall and CPU time per sample, variants interleaved round by round, and
 * the ledgers its write rounds compare (one storing nothing, the node's with each `record` timed).
 */
import { Effect } from "effect"
import { Ledger, type NewEffect } from "../../../services/node/Ledger.js"
import { percentile } from "../Common.js"
import type { Figures } from "./report.js"
import * as Trace from "./trace.js"

export interface Sample {
  readonly wall: number
  readonly cpu: number
}

export const figures = (samples: ReadonlyArray<Sample>): Figures => {
  const sorted = samples.map((s) => s.wall).sort((a, b) => a - b)
  const cpu = samples.map((s) => s.cpu).sort((a, b) => a - b)
  return {
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    cpu: percentile(cpu, 0.5)
  }
}

export const cpuNow = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

export const timed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Sample, E, R> =>
  Effect.suspend(() => {
    const cpu = cpuNow()
    const started = performance.now()
    return Effect.as(effect, undefined).pipe(
      Effect.map(() => ({ wall: performance.now() - started, cpu: cpuNow() - cpu }))
    )
  })

/**
 * `count` measured rounds after `skip` unmeasured ones; each round runs every variant once, the first
 * variant of the round turning with the round, and keeps its times.
 */
export const interleaved = <E, R>(
  count: number,
  skip: number,
  variants: ReadonlyArray<Effect.Effect<Sample, E, R>>
) =>
  Effect.gen(function*() {
    const samples = variants.map(() => [] as Array<Sample>)
    for (let round = 0; round < skip + count; round++) {
      for (let k = 0; k < variants.length; k++) {
        const i = (round + k) % variants.length
        const sample = yield* variants[i]!
        if (round >= skip) samples[i]!.push(sample)
      }
    }
    return samples.map(figures)
  })

/** A ledger that stores nothing: what PackageTools costs around the ledger, the ledger left out. */
export const noLedger = {
  record: (effect: NewEffect) =>
    Effect.succeed({
      ...effect,
      effectId: "eff_none",
      status: "sent",
      mayHaveRun: true,
      reason: null,
      answer: null,
      checked: false,
      recordedAt: "",
      answeredAt: null,
      reconciled: null
    }),
  answer: () => Effect.void,
  unknown: () => Effect.void
} as unknown as Ledger["Type"]

/** The node's ledger with the time of each `record` kept, as the call path runs it. */
export const timedLedger = (ledger: Ledger["Type"], times: Array<Sample>, what = "record") =>
  Ledger.of({
    ...ledger,
    record: (effect) =>
      Effect.suspend(() => {
        const cpu = cpuNow()
        const started = performance.now()
        return Effect.tap(ledger.record(effect), () =>
          Effect.sync(() => {
            const wall = performance.now() - started
            times.push({ wall, cpu: cpuNow() - cpu })
            Trace.keep(what, started, wall)
          }))
      })
  })
