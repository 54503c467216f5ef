/**
 * What one Effect Stream run costs by itself, in-process: the fixed part of every SSE response (the platform runs
 * the response's Stream once per request). CPU time per run over `BENCH_STREAM_RUNS` runs one after another, after
 * as many to warm up.
 *
 *   node --import tsx scripts/bench/http-stack/stream-runs.ts
 */
import { Channel, Chunk, Effect, Stream } from "effect"
import { positiveInt } from "../Common.js"

const runs = positiveInt("BENCH_STREAM_RUNS", 3000)
const events = [1, 2, 3, 4].map((seq) => ({ taskId: "task-1", seq, event: "delta" as const, data: { text: "hi" } }))

const cases: ReadonlyArray<readonly [string, () => Effect.Effect<unknown>]> = [
  ["a fiber, nothing else", () => Effect.void],
  ["Effect.scoped, nothing else", () => Effect.scoped(Effect.void)],
  ["Channel.runDrain of one write", () => Channel.runDrain(Channel.write(Chunk.unsafeFromArray(events)))],
  ["Stream.runDrain(Stream.empty)", () => Stream.runDrain(Stream.empty)],
  ["four events, runForEachChunk (the platform's sink)", () =>
    Stream.runForEachChunk(Stream.fromChunk(Chunk.unsafeFromArray(events)), () => Effect.void)],
  ["the same with one map stage", () =>
    Stream.runForEachChunk(Stream.map(Stream.fromChunk(Chunk.unsafeFromArray(events)), JSON.stringify), () => Effect.void)],
  ["the same with three map stages", () =>
    Stream.runForEachChunk(
      Stream.fromChunk(Chunk.unsafeFromArray(events)).pipe(Stream.map((e) => e), Stream.map((e) => e), Stream.map(JSON.stringify)),
      () => Effect.void
    )]
]

const main = async () => {
  for (const measured of [false, true]) {
    for (const [name, make] of cases) {
      const before = process.cpuUsage()
      for (let i = 0; i < runs; i++) await Effect.runPromise(make())
      const used = process.cpuUsage(before)
      if (measured) console.log(`${name.padEnd(52)} ${((used.user + used.system) / runs).toFixed(1)} µs CPU per run`)
    }
  }
}

main()
