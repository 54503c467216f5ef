/**
 * What a scavenge of the node copies (docs/decisions.md, "Widget presses: what the scavenges copy"), reproduced in
 * Effect alone: one long-running fiber repeats a step whose 300 small objects stay reachable across one I/O turn.
 * Run each mode with `node --trace-gc-nvp --import tsx scripts/bench/gc-fork-promotion.ts <mode>` and read the
 * scavenges' `new_space_survived` and `promoted`: the same work awaited on the fiber itself (`inline`) promotes
 * nothing; run in a forked fiber and joined or awaited (`fork`, `daemon`), every scavenge copies and then promotes
 * about 800 KB, i.e. every step's objects outlive the scavenge after them (as a press's do). `runPromise` (a root
 * fiber per step, from outside Effect) sits in between.
 */
import { Effect, Fiber } from "effect"

const work = Effect.async<number>((resume) => {
  const objects: Array<object> = []
  for (let i = 0; i < 300; i++) objects.push({ i })
  setImmediate(() => resume(Effect.succeed(objects.length)))
})

const steps: Record<string, Effect.Effect<unknown>> = {
  inline: work,
  fork: Effect.flatMap(Effect.fork(work), Fiber.join),
  daemon: Effect.flatMap(Effect.forkDaemon(work), Fiber.await)
}

const mode = process.argv[2] ?? "fork"
const rounds = 60_000
if (mode === "runPromise") {
  for (let i = 0; i < rounds; i++) await Effect.runPromise(work)
} else {
  const step = steps[mode]
  if (step === undefined) throw new Error(`mode: inline, fork, daemon or runPromise, not ${mode}`)
  await Effect.runPromise(Effect.gen(function*() {
    for (let i = 0; i < rounds; i++) yield* step
  }))
}
