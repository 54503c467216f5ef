/** Stream runs: concurrent streams of stamped deltas, and the burst of starts. */
import * as fs from "node:fs"
import { assertRunning } from "../Children.js"
import { percentile } from "../Common.js"
import {
  awaitAll,
  counters,
  createConversations,
  describeFailures,
  dropIdleSockets,
  failures,
  openStream,
  type SseStream,
  type Target,
  warmSockets
} from "./client.js"
import { askSample, askWritten, readRss, trackMemory } from "./probe.js"
import { burstText, type Layout, mib, ms2, now, settings, sleep, sorted, streamText } from "./settings.js"

export interface LevelResult {
  /** Where the server and the driver ran (see "Core layouts"). */
  readonly layout: Layout
  readonly streams: number
  readonly repeats: number
  readonly openMax: number
  readonly wallMs: number
  readonly deltasReceived: number
  /** Per stream, from the request sent: to the first `delta` event, sorted. */
  readonly ttfe: ReadonlyArray<number>
  /** To the response's head (the node's opening comment comes with it), sorted. */
  readonly toResponse: ReadonlyArray<number>
  /** To the first event of any kind, sorted. */
  readonly toFirstEvent: ReadonlyArray<number>
  /** Every delta's delivery latency (arrival at the driver minus the stamp the model wrote), sorted. */
  readonly delivery: ReadonlyArray<number>
  /** Inside the node: every delta's stamp to the end of the socket write that sent it, sorted (node only). */
  readonly toBytes: ReadonlyArray<number> | undefined
  /** Gap between consecutive deltas of a stream at the driver minus the scripted delay, all gaps, sorted. */
  readonly gaps: ReadonlyArray<number>
  /** The same for the gaps whose two deltas both arrived after every stream of the run had its first one. */
  readonly steadyGaps: ReadonlyArray<number>
  /** Per stream: (last delta − first delta − (n−1)·delay) / (n−1), then the mean over streams. */
  readonly meanGap: number
  readonly failed: number
  readonly failureDetail: string
  /** CPU time of the server over the wall time, in % of one core (undefined for the baseline). */
  readonly serverCpu: number | undefined
  readonly driverCpu: number
  readonly memory: {
    readonly idleRss: number
    readonly idleHeapUsed: number
    readonly peakRss: number
    readonly peakHeapUsed: number
    readonly peakHeapTotal: number
  } | undefined
}

/** A run's kind of turn: the measured streams, or the short turns of the burst. */
export interface Turns {
  readonly text: string
  readonly deltas: number
  /** Streams sent on idle keep-alive sockets opened before the run (warm), or each on a new connection. */
  readonly sockets: "warm" | "new"
}

export const streamTurns: Turns = { text: streamText, deltas: settings.deltas, sockets: "warm" }
export const burstTurns: Turns = { text: burstText, deltas: settings.burstDeltas, sockets: settings.burstSockets }

/**
 * `streams` streams sent at once, `repeats` times in sequence, each in a new conversation (on the node: the reference
 * takes any path); the node's memory, CPU and delta → bytes read around the run when `measureNode`.
 */
export const runLevel = async (
  target: Target,
  layout: Layout,
  streams: number,
  repeats: number,
  measureNode: boolean,
  turns: Turns = streamTurns
): Promise<LevelResult> => {
  const conversations = measureNode ? await createConversations(target, streams * repeats) : []
  const idle = measureNode ? await askSample(target.child, true) : undefined
  const idleRss = measureNode ? readRss(target.child.process.pid!) ?? 0 : 0
  const memory = measureNode ? trackMemory(target.child) : undefined
  const cpuBefore = measureNode ? await askSample(target.child, false) : undefined
  // The reference carries the preload too: its delta → bytes is the floor beside the node's.
  await askWritten(target.child)
  const driverBefore = process.cpuUsage()
  const all: Array<SseStream> = []
  /** Per stream: when every stream of its run (repeat) had its first delta. */
  const steadyFrom = new Map<SseStream, number>()
  let wallMs = 0
  counters.openMax = 0
  for (let repeat = 0; repeat < repeats; repeat++) {
    if (turns.sockets === "warm") await warmSockets(target, streams)
    else {
      // The server's side of the sockets just closed is handled before the run starts.
      await dropIdleSockets(target)
      await sleep(100)
    }
    const started = now()
    const batch = Array.from(
      { length: streams },
      (_, i) => openStream(target, measureNode ? conversations[repeat * streams + i]! : `c${i}`, turns.text)
    )
    await awaitAll(batch, settings.runDeadlineMs, `${target.label}: ${streams} streams`)
    wallMs += now() - started
    all.push(...batch)
    const lastFirst = Math.max(...batch.map((s) => s.deltas[0] ?? Number.NEGATIVE_INFINITY))
    for (const s of batch) steadyFrom.set(s, lastFirst)
  }
  const driverCpu = process.cpuUsage(driverBefore)
  const cpuAfter = measureNode ? await askSample(target.child, false) : undefined
  const written = await askWritten(target.child)
  if (settings.writtenDump !== undefined) {
    fs.appendFileSync(settings.writtenDump, JSON.stringify({ server: target.label, layout, streams, repeats, values: written }) + "\n")
  }
  const toBytes = sorted(written)
  const peaks = memory?.()
  assertRunning(target.child)

  const bad = failures(all, "answered")
  const good = all.filter((s) => !bad.includes(s))
  const ttfe: Array<number> = []
  const toResponse: Array<number> = []
  const toFirstEvent: Array<number> = []
  const delivery: Array<number> = []
  const gaps: Array<number> = []
  const steadyGaps: Array<number> = []
  const means: Array<number> = []
  let incomplete = 0
  let unstamped = 0
  for (const s of good) {
    if (s.deltas.length !== turns.deltas) {
      incomplete++
      continue
    }
    if (s.delivery.length !== s.deltas.length) {
      unstamped++
      continue
    }
    ttfe.push(s.deltas[0]! - s.sentAt)
    toResponse.push(s.respondedAt! - s.sentAt)
    toFirstEvent.push(s.firstEventAt! - s.sentAt)
    delivery.push(...s.delivery)
    const steady = steadyFrom.get(s)!
    for (let i = 1; i < s.deltas.length; i++) {
      const gap = s.deltas[i]! - s.deltas[i - 1]! - settings.delayMs
      gaps.push(gap)
      if (s.deltas[i - 1]! > steady) steadyGaps.push(gap)
    }
    means.push((s.deltas.at(-1)! - s.deltas[0]! - (s.deltas.length - 1) * settings.delayMs) / (s.deltas.length - 1))
  }
  return {
    layout,
    streams,
    repeats,
    openMax: counters.openMax,
    wallMs,
    deltasReceived: all.reduce((n, s) => n + s.deltas.length, 0),
    ttfe: sorted(ttfe),
    toResponse: sorted(toResponse),
    toFirstEvent: sorted(toFirstEvent),
    delivery: sorted(delivery),
    toBytes,
    gaps: sorted(gaps),
    steadyGaps: sorted(steadyGaps),
    meanGap: means.length === 0 ? Number.NaN : means.reduce((a, b) => a + b, 0) / means.length,
    failed: bad.length + incomplete + unstamped,
    failureDetail: [
      ...(bad.length > 0 ? [describeFailures(bad)] : []),
      ...(incomplete > 0 ? [`${incomplete} streams with a wrong number of deltas`] : []),
      ...(unstamped > 0 ? [`${unstamped} streams with deltas that carry no stamp`] : [])
    ].join("; "),
    serverCpu: cpuBefore !== undefined && cpuAfter !== undefined
      ? ((cpuAfter.cpuMicros - cpuBefore.cpuMicros) / 1000 / wallMs) * 100
      : undefined,
    driverCpu: ((driverCpu.user + driverCpu.system) / 1000 / wallMs) * 100,
    memory: idle !== undefined && peaks !== undefined
      ? {
        idleRss,
        idleHeapUsed: idle.heapUsed,
        peakRss: peaks.peakRss,
        peakHeapUsed: peaks.peakHeapUsed,
        peakHeapTotal: peaks.peakHeapTotal
      }
      : undefined
  }
}

export const describeLevel = (label: string, r: LevelResult) =>
  `  ${label}, ${`${r.layout} cores,`.padEnd(15)} ${String(r.streams).padStart(3)} streams${r.repeats > 1 ? ` ×${r.repeats}` : ""}: ` +
  (r.toBytes === undefined
    ? ""
    : `delta → bytes p50 ${ms2(percentile(r.toBytes, 0.5))} / p99 ${ms2(percentile(r.toBytes, 0.99))} ms, `) +
  `delivery p50 ${ms2(percentile(r.delivery, 0.5))} / p99 ${ms2(percentile(r.delivery, 0.99))} ms, ` +
  `gap − ${settings.delayMs} ms p50 ${ms2(percentile(r.gaps, 0.5))} / p99 ${ms2(percentile(r.gaps, 0.99))} ms ` +
  `(steady state p99 ${ms2(percentile(r.steadyGaps, 0.99))} ms over ${r.steadyGaps.length} gaps), ` +
  `first event p50 ${ms2(percentile(r.ttfe, 0.5))} / p99 ${ms2(percentile(r.ttfe, 0.99))} ms` +
  (r.memory === undefined ? "" : `, peak RSS ${mib(r.memory.peakRss)} MiB`) +
  (r.serverCpu === undefined ? "" : `, node CPU ${r.serverCpu.toFixed(0)} %`) +
  `, driver CPU ${r.driverCpu.toFixed(0)} %` +
  (r.failed > 0 ? `, ${r.failed} FAILED (${r.failureDetail})` : "")

