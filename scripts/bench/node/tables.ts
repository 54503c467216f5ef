/** The report's tables: every build side by side, the targets judged on the current build ("after"). */
import { seconds } from "../Common.js"
import { referenceLabel } from "./builds.js"
import {
  addedPerDeltaMet,
  burstMet,
  burstRatio,
  cpuPerStart,
  type BuildResults,
  emergencyMet,
  inLayout,
  judgedBuild,
  judgedLayout,
  memoryMet,
  p50,
  p99,
  type Results,
  sameRun,
  stopMet
} from "./results.js"
import { int, mib, ms2, plural, settings } from "./settings.js"
import type { LevelResult } from "./streams.js"

export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  [
    `| ${header.join(" | ")} |`,
    `| ${header.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const verdict = (met: boolean) => (met ? "**met**" : "**not met**")

export const buildName = (b: BuildResults) => `${b.build.key} (${b.build.commit})`

const streamsLabel = (r: LevelResult) => (r.repeats > 1 ? `${r.streams} (×${r.repeats} in sequence)` : String(r.streams))

const pair = (values: ReadonlyArray<number> | undefined) => `${ms2(p50(values))} / ${ms2(p99(values))}`

/** One row per target: the figure of every build, the verdict on the current one. */
export const targetsTable = (r: Results) => {
  const t = settings.targets
  const layout = judgedLayout(r)
  const after = judgedBuild(r)
  const cells = (f: (b: BuildResults) => string) => r.builds.map(f)
  const rows: Array<Array<string>> = []
  for (const l of inLayout(after.levels, layout)) {
    const floor = sameRun(r.reference.levels, layout, l)
    rows.push([
      `≤ ${t.addedPerDeltaP99Ms} ms p99 added per delta (the model's delta → its bytes written to the socket, inside ` +
      `the node), ${streamsLabel(l)} stream${l.streams === 1 ? "" : "s"}, ${layout} cores; plain node:http's own ` +
      `delta → bytes p99 is ${ms2(p99(floor?.toBytes))} ms, at the client ${ms2(p99(floor?.delivery))} ms`,
      ...cells((b) => {
        const run = sameRun(b.levels, layout, l)
        return run === undefined
          ? "not measured"
          : `p99 ${ms2(p99(run.toBytes))} ms (p50 ${ms2(p50(run.toBytes))} ms, ${int(run.toBytes?.length ?? 0)} deltas); ` +
            `at the client p99 ${ms2(p99(run.delivery))} ms`
      }),
      verdict(addedPerDeltaMet(l))
    ])
  }
  const memoryRun = (b: BuildResults) => b.levels.find((l) => l.layout === layout && l.streams === t.memoryStreams)
  const afterMemory = memoryRun(after)
  rows.push([
    `${t.memoryStreams} concurrent streams in ≤ ${t.memoryMiB} MiB (${layout} cores)`,
    ...cells((b) => {
      const run = memoryRun(b)
      return run?.memory === undefined ? "not measured" : `peak RSS ${mib(run.memory.peakRss)} MiB with ${run.openMax} streams open at once`
    }),
    afterMemory === undefined ? "not measured" : verdict(memoryMet(afterMemory))
  ])
  rows.push([
    `(for reference) ${settings.atRestStreams} streams open at rest`,
    ...cells((b) => `RSS ${mib(b.atRest.rss)} MiB after a full GC`),
    after.atRest.rss <= t.memoryMiB * 2 ** 20 ? "within" : "over"
  ])
  rows.push([
    `stop to end of stream ≤ ${t.stopP99Ms} ms p99`,
    ...cells((b) => `p99 ${ms2(p99(b.stops.ended))} ms over ${b.stops.ended.length} stops`),
    verdict(stopMet(after))
  ])
  rows.push([
    `emergency stop of ${settings.emergencyTurns} turns ≤ ${t.emergencyMs} ms`,
    ...cells((b) =>
      `${b.emergency.map((e) => ms2(e.lastEndMs)).join(", ")} ms (${plural(b.emergency.length, "round")}; worst counts)` +
      (b.emergency.every((e) => e.turns === settings.emergencyTurns) ? "" : `; the response counted ${b.emergency.map((e) => e.turns).join(", ")} turns`)
    ),
    verdict(emergencyMet(after))
  ])
  for (const burst of inLayout(after.burst, layout)) {
    const reference = r.reference.burst.find((b) => b.layout === layout)
    rows.push([
      `${settings.burst} streams started at once: time to first event p99 ≤ ${t.burstRatio}× plain node:http's in the same run ` +
      `(${ms2(p99(reference?.toFirstEvent))} ms; ${plural(settings.burstRounds, "round")}, ${layout} cores)`,
      ...cells((b) => {
        const run = b.burst.find((x) => x.layout === layout)
        return run === undefined
          ? "not measured"
          : `p99 ${ms2(p99(run.toFirstEvent))} ms (p50 ${ms2(p50(run.toFirstEvent))} ms), ${burstRatio(r, run).toFixed(1)}×`
      }),
      verdict(burstMet(r, burst))
    ])
  }
  return table(["Target", ...r.builds.map((b) => `Node ${buildName(b)}`), "Verdict (after)"], rows)
}

/** Every server's runs of one kind, side by side: per layout and level, the builds and then the reference. */
const sideBySide = (
  r: Results,
  pick: (levels: { readonly levels: ReadonlyArray<LevelResult>; readonly burst: ReadonlyArray<LevelResult> }) => ReadonlyArray<LevelResult>
) => {
  const servers = [
    ...r.builds.map((b) => [`node ${buildName(b)}`, pick(b)] as const),
    ...r.shapes.map((shape) => [shape.label, pick(shape)] as const),
    [referenceLabel, pick(r.reference)] as const
  ]
  const first = pick(judgedBuild(r))
  return first.flatMap((like) =>
    servers.flatMap(([label, runs]) => {
      const run = sameRun(runs, like.layout, like)
      return run === undefined ? [] : [[label, run] as const]
    })
  )
}

const failedCell = (l: LevelResult) => (l.failed === 0 ? "0" : `${l.failed} (${l.failureDetail})`)

export const streamsTable = (r: Results) =>
  table(
    [
      "Server",
      "Cores",
      "Streams",
      "Open at once (max)",
      "Wall time",
      "Deltas/s",
      "Delta → bytes in the node p50 / p99 (ms)",
      "Delivery at the client p50 / p99 (ms)",
      `Gap − ${settings.delayMs} ms p50 / p99 (ms)`,
      `Steady-state gap − ${settings.delayMs} ms p99 (ms)`,
      `Mean gap − ${settings.delayMs} ms (ms)`,
      "First delta p50 / p99 (ms)",
      "Server CPU",
      "Driver CPU",
      "Failed"
    ],
    sideBySide(r, (x) => x.levels).map(([label, l]) => [
      label,
      l.layout,
      streamsLabel(l),
      String(l.openMax),
      seconds(l.wallMs),
      int(l.deltasReceived / (l.wallMs / 1000)),
      l.toBytes === undefined ? "–" : pair(l.toBytes),
      pair(l.delivery),
      pair(l.gaps),
      `${ms2(p99(l.steadyGaps))} (${int(l.steadyGaps.length)} of ${int(l.gaps.length)} gaps)`,
      ms2(l.meanGap),
      pair(l.ttfe),
      l.serverCpu === undefined ? "–" : `${l.serverCpu.toFixed(0)} %`,
      `${l.driverCpu.toFixed(0)} %`,
      failedCell(l)
    ])
  )

export const burstTable = (r: Results) =>
  table(
    [
      "Server",
      "Cores",
      "Streams at once × rounds",
      "Response head p50 / p99 (ms)",
      "First event p50 / p99 (ms)",
      "First delta p50 / p99 (ms)",
      "First event p99 ÷ plain node:http's",
      "Server CPU",
      "Server CPU per start (ms)",
      "Failed"
    ],
    sideBySide(r, (x) => x.burst).map(([label, l]) => [
      label,
      l.layout,
      `${l.streams} × ${l.repeats}`,
      pair(l.toResponse),
      pair(l.toFirstEvent),
      pair(l.ttfe),
      label === referenceLabel ? "1.0×" : `${burstRatio(r, l).toFixed(1)}×`,
      l.serverCpu === undefined ? "–" : `${l.serverCpu.toFixed(0)} %`,
      l.serverCpu === undefined ? "–" : ms2(cpuPerStart(l)!),
      failedCell(l)
    ])
  )

const perStream = (l: LevelResult) => (l.memory === undefined ? Number.NaN : (l.memory.peakRss - l.memory.idleRss) / l.streams)

export const memoryTable = (r: Results) =>
  table(
    ["Build", "Streams", "Idle RSS (MiB)", "Peak RSS (MiB)", "Per stream (KiB)", "Idle heap used (MiB)", "Peak heap used / total (MiB)"],
    inLayout(judgedBuild(r).levels, judgedLayout(r)).flatMap((like) =>
      r.builds.flatMap((b) => {
        const l = sameRun(b.levels, like.layout, like)
        return l?.memory === undefined ? [] : [[
          buildName(b),
          streamsLabel(l),
          mib(l.memory.idleRss),
          mib(l.memory.peakRss),
          l.streams === 1 ? "–" : (perStream(l) / 1024).toFixed(0),
          mib(l.memory.idleHeapUsed),
          `${mib(l.memory.peakHeapUsed)} / ${mib(l.memory.peakHeapTotal)}`
        ]]
      })
    )
  )

export const atRestTable = (r: Results) =>
  table(
    ["Build", "State", "Streams open", "RSS (MiB)", "Heap used after a full GC (MiB)", "Per stream: RSS / heap (KiB)"],
    r.builds.flatMap((b) => {
      const a = b.atRest
      return [
        [buildName(b), "no turn running", "0", mib(a.idleRss), mib(a.idleHeapUsed), "–"],
        [
          buildName(b),
          `${a.streams} long turns, between two deltas`,
          String(a.streams),
          mib(a.rss),
          mib(a.heapUsed),
          `${((a.rss - a.idleRss) / a.streams / 1024).toFixed(0)} / ${((a.heapUsed - a.idleHeapUsed) / a.streams / 1024).toFixed(0)}`
        ]
      ]
    })
  )

export const stopTable = (r: Results) =>
  table(
    ["From POST /conversations/{id}/stop sent to", ...r.builds.map((b) => `${buildName(b)}: p50 / p99 / max (ms)`)],
    ([
      ["its response (200, stopped: true)", (b: BuildResults) => b.stops.answered],
      ["the stream's `done` event", (b: BuildResults) => b.stops.done],
      ["the stream's end (response closed)", (b: BuildResults) => b.stops.ended]
    ] as const).map(([label, values]) => [
      label,
      ...r.builds.map((b) => `${pair(values(b))} / ${ms2(values(b).at(-1) ?? Number.NaN)}`)
    ])
  )

export const emergencyTable = (r: Results) =>
  table(
    ["Build", "Round", "stopped.turns", "POST /stop answered (ms)", "Half the streams ended (ms)", "Last `done` (ms)", "All streams ended (ms)", `≤ ${settings.targets.emergencyMs} ms`],
    r.builds.flatMap((b) =>
      b.emergency.map((e, i) => [
        buildName(b),
        String(i + 1),
        String(e.turns),
        ms2(e.answeredMs),
        ms2(p50(e.endedMs)),
        ms2(e.lastDoneMs),
        ms2(e.lastEndMs),
        verdict(e.turns === settings.emergencyTurns && e.lastEndMs <= settings.targets.emergencyMs)
      ])
    )
  )
