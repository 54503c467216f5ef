/** What one run of bench:node measured, per build and for the reference, and the readings the report judges. */
import { percentile } from "../Common.js"
import type { Build } from "./builds.js"
import type { Layout } from "./settings.js"
import { settings } from "./settings.js"
import type { AtRest, EmergencyRound, StopResult } from "./stopping.js"
import type { LevelResult } from "./streams.js"

/** Everything measured on the node of one build. */
export interface BuildResults {
  readonly build: Build
  /** The stream runs, every level in every layout. */
  readonly levels: ReadonlyArray<LevelResult>
  /** The burst, once per layout (BENCH_BURST streams × BENCH_BURST_ROUNDS rounds). */
  readonly burst: ReadonlyArray<LevelResult>
  readonly atRest: AtRest
  readonly stops: StopResult
  readonly emergency: ReadonlyArray<EmergencyRound>
  /** The node's high-water RSS (VmHWM) over the whole benchmark. */
  readonly peakRssOverall: number | undefined
}

export interface Results {
  readonly date: Date
  readonly durationMs: number
  readonly load: { readonly before: number; readonly after: number }
  /** Cores used on average by other processes while the servers were measured. */
  readonly otherCores: number
  /** The baseline ("before") first when there is one, then the current build ("after"). */
  readonly builds: ReadonlyArray<BuildResults>
  readonly reference: { readonly levels: ReadonlyArray<LevelResult>; readonly burst: ReadonlyArray<LevelResult> }
  /** plain-shape.ts's modes, each with its label: the burst only. */
  readonly shapes: ReadonlyArray<{
    readonly label: string
    readonly levels: ReadonlyArray<LevelResult>
    readonly burst: ReadonlyArray<LevelResult>
  }>
  /** Why the stream runs were not measured with separate cores, when they were not. */
  readonly separateSkipped: string | undefined
  readonly connectionRetries: number
}

/** The build the targets are judged on: the current one. */
export const judgedBuild = (r: Results): BuildResults => r.builds.find((b) => b.build.key === "after")!

/** The layout the targets are judged in: separate cores, unless they were not measured. */
export const judgedLayout = (r: Results): Layout =>
  judgedBuild(r).levels.some((l) => l.layout === "separate") ? "separate" : "shared"

export const inLayout = (levels: ReadonlyArray<LevelResult>, layout: Layout) => levels.filter((l) => l.layout === layout)

/** The run in `levels` with `layout` at the level of `like`, if there is one. */
export const sameRun = (levels: ReadonlyArray<LevelResult>, layout: Layout, like: LevelResult) =>
  levels.find((l) => l.layout === layout && l.streams === like.streams && l.repeats === like.repeats)

export const p99 = (values: ReadonlyArray<number> | undefined) => percentile(values ?? [], 0.99)
export const p50 = (values: ReadonlyArray<number> | undefined) => percentile(values ?? [], 0.5)

/** The burst's first event p99 over the reference's in the same layout (NaN when either is missing). */
export const burstRatio = (r: Results, burst: LevelResult) => {
  const reference = r.reference.burst.find((b) => b.layout === burst.layout)
  return reference === undefined ? Number.NaN : p99(burst.toFirstEvent) / p99(reference.toFirstEvent)
}

/** A run's server CPU per stream started, ms (undefined where the server's CPU was not read). */
export const cpuPerStart = (l: LevelResult) =>
  l.serverCpu === undefined ? undefined : (l.serverCpu / 100) * l.wallMs / (l.streams * l.repeats)

export const addedPerDeltaMet = (l: LevelResult) =>
  l.failed === 0 && (l.toBytes ?? []).length === l.deltasReceived && p99(l.toBytes) <= settings.targets.addedPerDeltaP99Ms

export const memoryMet = (l: LevelResult) =>
  l.memory !== undefined && l.failed === 0 && l.openMax >= settings.targets.memoryStreams &&
  l.memory.peakRss <= settings.targets.memoryMiB * 2 ** 20

export const stopMet = (b: BuildResults) => p99(b.stops.ended) <= settings.targets.stopP99Ms

export const emergencyMet = (b: BuildResults) =>
  b.emergency.length > 0 &&
  b.emergency.every((e) => e.turns === settings.emergencyTurns && e.lastEndMs <= settings.targets.emergencyMs)

export const burstMet = (r: Results, burst: LevelResult) => burst.failed === 0 && burstRatio(r, burst) <= settings.targets.burstRatio
