/**
 * bin/v8-tuning.js, which `clark` applies before it loads anything: with allocation-site pretenuring off, the
 * objects of a forked and joined Effect fiber no longer outlive the scavenges after them
 * (scripts/bench/gc-fork-promotion.ts, docs/decisions.md "V8's allocation-site pretenuring"), and
 * CLARK_V8_PRETENURING=on keeps V8's default. Real child processes, V8's own GC trace.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

// A long-running fiber that forks a step keeping 300 small objects across one I/O turn, then joins it.
const script = `
import { Effect, Fiber } from "effect"
import { tuneV8 } from ${JSON.stringify(path.join(root, "bin/v8-tuning.js"))}
tuneV8()
const work = Effect.async((resume) => {
  const objects = []
  for (let i = 0; i < 300; i++) objects.push({ i })
  setImmediate(() => resume(Effect.succeed(objects.length)))
})
const step = Effect.flatMap(Effect.fork(work), Fiber.join)
await Effect.runPromise(Effect.gen(function*() { for (let i = 0; i < 25000; i++) yield* step }))
`

/** Bytes promoted by the last 20 scavenges of the script's run. */
const promotedAtTheEnd = (env: NodeJS.ProcessEnv) => {
  const run = spawnSync(process.execPath, ["--trace-gc-nvp", "--input-type=module", "-e", script], {
    cwd: root,
    env,
    encoding: "utf8",
    timeout: 60_000
  })
  expect(run.status).toBe(0)
  const promoted = run.stdout.split("\n")
    .filter((line) => line.includes("gc=s "))
    .map((line) => Number(/ promoted=(\d+)/.exec(line)?.[1]))
  expect(promoted.length).toBeGreaterThan(40)
  return promoted.slice(-20).reduce((sum, bytes) => sum + bytes, 0)
}

describe("V8 tuning", () => {
  it("keeps a forked fiber's objects from being promoted, unless CLARK_V8_PRETENURING=on", () => {
    const { CLARK_V8_PRETENURING: _, ...env } = process.env
    const tuned = promotedAtTheEnd(env)
    const untuned = promotedAtTheEnd({ ...env, CLARK_V8_PRETENURING: "on" })
    // V8's default promotes ~770 KB every second scavenge here; without pretenuring a few hundred bytes.
    expect(untuned).toBeGreaterThan(2_000_000)
    expect(tuned).toBeLessThan(100_000)
  }, 120_000)
})
