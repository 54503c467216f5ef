/** Stopping: one conversation at a time, the emergency stop, and memory at rest (long turns a stop ends). */
import { awaitAll, call, createConversations, describeFailures, expectStatus, failures, openStream, type Target, warmSockets } from "./client.js"
import { askSample, readRss } from "./probe.js"
import { longText, now, settings, sleep, sorted, withDeadline } from "./settings.js"

/** Starts `count` long turns and waits until every stream has its first delta. */
const startLongTurns = async (target: Target, count: number) => {
  const conversations = await createConversations(target, count)
  await warmSockets(target, count)
  const streams = conversations.map((id) => openStream(target, id, longText))
  try {
    await withDeadline(Promise.all(streams.map((s) => s.firstDelta)), settings.waitDeadlineMs, `${count} long turns starting`)
  } catch (error) {
    for (const s of streams) s.abort()
    throw error
  }
  return streams
}

export interface StopResult {
  readonly answered: ReadonlyArray<number>
  readonly done: ReadonlyArray<number>
  readonly ended: ReadonlyArray<number>
}

export const runStops = async (target: Target): Promise<StopResult> => {
  const streams = await startLongTurns(target, settings.stopTurns)
  const answered: Array<number> = []
  const done: Array<number> = []
  const ended: Array<number> = []
  for (const s of streams) {
    const sent = now()
    const body = await expectStatus(
      call(target, "POST", `/conversations/${s.conversationId}/stop`, { source: "api" }),
      200,
      "POST /conversations/{id}/stop"
    )
    answered.push(now() - sent)
    if (body.stopped !== true) throw new Error(`POST /conversations/{id}/stop answered ${JSON.stringify(body)}; expected stopped: true`)
    await awaitAll([s], settings.waitDeadlineMs, "a stopped stream ending")
    done.push((s.doneAt ?? Number.NaN) - sent)
    ended.push(s.endedAt! - sent)
  }
  const bad = failures(streams, "stopped")
  if (bad.length > 0) throw new Error(`${bad.length} stopped streams did not end as "stopped": ${describeFailures(bad)}`)
  return { answered: sorted(answered), done: sorted(done), ended: sorted(ended) }
}

export interface EmergencyRound {
  readonly turns: number
  readonly reported: unknown
  readonly answeredMs: number
  readonly lastDoneMs: number
  readonly lastEndMs: number
  readonly endedMs: ReadonlyArray<number>
  /** The node's CPU (preload, process.cpuUsage) from just before POST /stop to 300 ms after the last stream ended. */
  readonly cpuMs: number
}

export const runEmergency = async (target: Target): Promise<EmergencyRound> => {
  const streams = await startLongTurns(target, settings.emergencyTurns)
  await sleep(200)
  const before = await askSample(target.child, false)
  const sent = now()
  const body = await expectStatus(call(target, "POST", "/stop"), 200, "POST /stop")
  const answeredMs = now() - sent
  await awaitAll(streams, settings.waitDeadlineMs, "streams ending after the emergency stop")
  // Settled: what the node does after the last `done` (the turns' ends, the requests' scopes) counts too.
  await sleep(300)
  const after = await askSample(target.child, false)
  const bad = failures(streams, "stopped")
  if (bad.length > 0) throw new Error(`${bad.length} streams did not end as "stopped": ${describeFailures(bad)}`)
  const endedMs = sorted(streams.map((s) => s.endedAt! - sent))
  return {
    turns: Number(body?.stopped?.turns),
    reported: body?.stopped,
    answeredMs,
    lastDoneMs: Math.max(...streams.map((s) => s.doneAt! - sent)),
    lastEndMs: endedMs.at(-1)!,
    endedMs,
    cpuMs: (after.cpuMicros - before.cpuMicros) / 1000
  }
}

export interface AtRest {
  readonly streams: number
  readonly idleRss: number
  readonly idleHeapUsed: number
  readonly rss: number
  readonly heapUsed: number
  readonly stopTurns: number
  readonly stopMs: number
}

/**
 * Memory at rest: `count` long turns, every stream open between two deltas; RSS and heap after a
 * full collection, against the same readings with no turn running. Then an (untimed target)
 * emergency stop ends them.
 */
export const runAtRest = async (target: Target, count: number): Promise<AtRest> => {
  const idle = await askSample(target.child, true)
  const idleRss = readRss(target.child.process.pid!) ?? 0
  const streams = await startLongTurns(target, count)
  await sleep(500)
  const loaded = await askSample(target.child, true)
  const rss = readRss(target.child.process.pid!) ?? 0
  const sent = now()
  const body = await expectStatus(call(target, "POST", "/stop"), 200, "POST /stop")
  await awaitAll(streams, settings.waitDeadlineMs, "streams ending after the emergency stop")
  const bad = failures(streams, "stopped")
  if (bad.length > 0) throw new Error(`${bad.length} streams did not end as "stopped": ${describeFailures(bad)}`)
  return {
    streams: count,
    idleRss,
    idleHeapUsed: idle.heapUsed,
    rss,
    heapUsed: loaded.heapUsed,
    stopTurns: Number(body?.stopped?.turns),
    stopMs: Math.max(...streams.map((s) => s.endedAt! - sent))
  }
}
