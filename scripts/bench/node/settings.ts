/** bench:node settings (from the environment), the scripted model's script, and small helpers. */
import { performance } from "node:perf_hooks"
import { positiveInt, seconds } from "../Common.js"

/** Where the stream runs put the server under test and the driver: see cores.ts. */
export type Layout = "separate" | "shared"

/** BENCH_FULL=1: the full sizes (the figures of the targets) wherever a setting is not given. */
export const full = (() => {
  const raw = process.env.BENCH_FULL ?? ""
  if (raw !== "" && raw !== "0" && raw !== "1") throw new Error(`BENCH_FULL must be 0 or 1, got ${JSON.stringify(raw)}`)
  return raw === "1"
})()

const coreChoices = new Map<string, ReadonlyArray<Layout>>([
  ["separate,shared", ["separate", "shared"]],
  ["separate", ["separate"]],
  ["shared", ["shared"]]
])

/** BENCH_CORES: the core layouts of the stream runs, in the order they run. */
const coreLayouts = (): ReadonlyArray<Layout> => {
  const raw = process.env.BENCH_CORES ?? ""
  const layouts = coreChoices.get(raw === "" ? (full ? "separate,shared" : "separate") : raw.replace(/\s+/g, ""))
  if (layouts === undefined) throw new Error(`BENCH_CORES must be separate,shared, separate or shared, got ${JSON.stringify(raw)}`)
  return layouts
}

/** BENCH_BASELINE_REF: the commit measured as "before" (default: the last one before the re-founding); none skips it. */
const baselineRef = (): string | undefined => {
  const raw = (process.env.BENCH_BASELINE_REF ?? "").trim()
  if (raw === "none") return undefined
  if (raw.startsWith("-")) throw new Error(`BENCH_BASELINE_REF: ${JSON.stringify(raw)} is not a commit`)
  return raw === "" ? "e7135c2" : raw
}

const streamLevel = (name: string, level: string) => {
  const value = Number(level.trim())
  if (!Number.isInteger(value) || value < 1 || value > 550) throw new Error(`${name}: ${JSON.stringify(level)} is not 1 to 550`)
  return value
}

export const settings = {
  full,
  baselineRef: baselineRef(),
  deltas: positiveInt("BENCH_DELTAS", full ? 40 : 20),
  delayMs: positiveInt("BENCH_DELAY_MS", 25),
  /** Concurrent streams per run; the single stream runs `singleRepeats` times in sequence. */
  levels: (process.env.BENCH_LEVELS ?? "1,100,500").split(",").map((level) => streamLevel("BENCH_LEVELS", level)),
  /**
   * BENCH_SINGLE_REPEATS: the single stream's sequential runs. Five runs of 40 deltas made its p99 the 2nd-worst of
   * 200 deltas, one event-loop pause moved it; the full run takes 25 (1,000 deltas, 25 s a build and layout).
   */
  singleRepeats: positiveInt("BENCH_SINGLE_REPEATS", full ? 25 : 5),
  cores: coreLayouts(),
  /** The burst: this many streams sent at once, `burstRounds` times; each turn writes `burstDeltas` deltas. */
  burst: streamLevel("BENCH_BURST", process.env.BENCH_BURST ?? "100"),
  burstRounds: positiveInt("BENCH_BURST_ROUNDS", full ? 5 : 3),
  burstDeltas: 3,
  /** Whether the burst's streams go out on idle keep-alive sockets opened before (warm) or each on a new connection. */
  burstSockets: (() => {
    const raw = process.env.BENCH_BURST_SOCKETS ?? ""
    if (raw !== "" && raw !== "new" && raw !== "warm") throw new Error(`BENCH_BURST_SOCKETS must be new or warm, got ${JSON.stringify(raw)}`)
    return raw === "warm" ? "warm" : "new"
  })() as "new" | "warm",
  warmupStreams: 50,
  atRestStreams: positiveInt("BENCH_AT_REST", 500),
  stopTurns: positiveInt("BENCH_STOPS", 100),
  emergencyTurns: 200,
  emergencyRounds: positiveInt("BENCH_ESTOP_ROUNDS", full ? 3 : 1),
  /**
   * BENCH_ONLY=burst: only the warm-up and the burst (a quick loop while working on start-up); BENCH_ONLY=estop: only
   * the warm-up and the emergency stops, with the node's CPU per stopped turn. Nothing is written.
   */
  only: (() => {
    const raw = (process.env.BENCH_ONLY ?? "").trim()
    if (raw !== "" && raw !== "burst" && raw !== "estop") throw new Error(`BENCH_ONLY must be burst, estop or unset, got ${JSON.stringify(raw)}`)
    return raw === "" ? undefined : raw as "burst" | "estop"
  })(),
  nodeFlags: (process.env.BENCH_NODE_FLAGS ?? "").split(/\s+/).filter((flag) => flag.length > 0),
  /**
   * BENCH_WRITTEN_DUMP=<file>: each stream run's delta → bytes times, in the order the server wrote them, appended to
   * this file as a JSON line per run and server (which delta of a stream is slow: the first, the last, any).
   */
  writtenDump: (process.env.BENCH_WRITTEN_DUMP ?? "").trim() || undefined,
  /** A long turn: one delta, then this long before anything else. */
  longDelayMs: 120_000,
  targets: {
    addedPerDeltaP99Ms: 1,
    memoryStreams: 500,
    memoryMiB: 512,
    stopP99Ms: 50,
    emergencyMs: 200,
    /** First event of a burst, p99, as a multiple of the plain node:http reference's in the same run. */
    burstRatio: 4
  },
  /** Upper bounds that keep a broken run from hanging. */
  runDeadlineMs: 60_000,
  waitDeadlineMs: 30_000
}

/** The settings of this run as environment assignments, for the report (every one, defaults included). */
export const settingsLine = () =>
  [
    `BENCH_FULL=${settings.full ? 1 : 0}`,
    `BENCH_BASELINE_REF=${settings.baselineRef ?? "none"}`,
    `BENCH_LEVELS=${settings.levels.join(",")}`,
    `BENCH_DELTAS=${settings.deltas}`,
    `BENCH_SINGLE_REPEATS=${settings.singleRepeats}`,
    `BENCH_DELAY_MS=${settings.delayMs}`,
    `BENCH_CORES=${settings.cores.join(",")}`,
    `BENCH_BURST=${settings.burst}`,
    `BENCH_BURST_ROUNDS=${settings.burstRounds}`,
    `BENCH_BURST_SOCKETS=${settings.burstSockets}`,
    `BENCH_AT_REST=${settings.atRestStreams}`,
    `BENCH_STOPS=${settings.stopTurns}`,
    `BENCH_ESTOP_ROUNDS=${settings.emergencyRounds}`
  ].join(" ")

/** Whether this run has the sizes the targets are stated for (the full sizes or more). */
export const fullSized = () =>
  settings.deltas >= 40 && settings.singleRepeats >= 25 && settings.delayMs === 25 && [1, 100, 500].every((level) => settings.levels.includes(level)) &&
  settings.cores.includes("separate") && settings.burst === 100 && settings.atRestStreams >= 500 &&
  settings.stopTurns >= 100 && settings.emergencyRounds >= 3

export const streamText = "stream please"
export const burstText = "burst please"
export const longText = "long please"

const stamped = (count: number) =>
  Array.from({ length: count }, (_, i) => [...(i === 0 ? [] : [{ delay: settings.delayMs }]), { stamp: true }]).flat()

/**
 * The scripted model: measured streams (every delta stamped with the monotonic clock when the model produced it),
 * the short turns of the burst, and turns that only a stop ends.
 */
export const script = {
  rules: [
    { match: "^stream", steps: stamped(settings.deltas) },
    { match: "^burst", steps: stamped(settings.burstDeltas) },
    { match: "^long", steps: [{ delta: "started; " }, { delay: settings.longDelayMs }, { delta: "never sent" }] }
  ],
  default: [{ delta: "unexpected message" }]
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
export const now = () => performance.now()
export const ms2 = (value: number) => (Number.isNaN(value) ? "–" : value.toFixed(2))
export const int = (value: number) => Math.round(value).toLocaleString("en-US")
export const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
export const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`
export const sorted = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)
export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

export const withDeadline = async <A>(promise: Promise<A>, ms: number, what: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${seconds(ms)}`)), ms)
      })
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** Runs `f` over `items`, at most `limit` at a time. */
export const mapLimit = async <A, B>(items: ReadonlyArray<A>, limit: number, f: (item: A) => Promise<B>): Promise<Array<B>> => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await f(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
