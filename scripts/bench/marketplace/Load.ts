/** Driving the servers: autocannon at full speed, an open-loop pace, and the servers taking turns. */
import autocannon from "autocannon"
import * as http from "node:http"
import { childFailure, isRunning } from "../Children.js"
import { log, percentile, seconds } from "../Common.js"
import type { Server } from "./Servers.js"
import { int, ms2, requestTimeoutSeconds, runWarmupSeconds, settings, sleep, spread, warmupSeconds } from "./Settings.js"
import type { Scenario } from "./Workload.js"

export interface Measurement {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  /** Connection-level failures (resets, timeouts): counted and reported, not fatal. */
  readonly errors: number
  readonly errorKinds: string
  readonly total: number
}

interface LoadOptions {
  readonly duration: number
  readonly rate?: number | undefined
}

/**
 * One autocannon run. Latencies are taken from each response's timing rather than autocannon's
 * histogram, which keeps whole milliseconds only; at a fixed rate no coordinated-omission
 * correction is applied (autocannon's uses an interval in the wrong unit and backfills 1 ms samples).
 */
export const load = async (server: Server, paths: ReadonlyArray<string>, options: LoadOptions) => {
  await settle(server)
  return new Promise<Measurement>((resolve, reject) => {
    const latencies: Array<number> = []
    const errorKinds = new Map<string, number>()
    const instance = autocannon(
      {
        url: server.baseUrl,
        connections: settings.connections,
        duration: options.duration,
        // A slow answer is measured, not dropped: heavy searches queue behind 50 connections.
        timeout: requestTimeoutSeconds,
        requests: paths.map((requestPath) => ({ method: "GET" as const, path: requestPath })),
        ...(options.rate === undefined ? {} : { overallRate: options.rate, ignoreCoordinatedOmission: true })
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error)
        if (!isRunning(server.child)) return reject(childFailure(server.child, "exited during the run"))
        if (result.non2xx > 0) {
          return reject(
            new Error(
              `${server.label}: ${result.non2xx} non-2xx responses (status codes ${JSON.stringify(result.statusCodeStats ?? {})}) ` +
                `over ${paths[0]} and ${paths.length - 1} more`
            )
          )
        }
        latencies.sort((a, b) => a - b)
        resolve({
          requestsPerSecond: result.requests.average,
          p50: percentile(latencies, 0.5),
          p99: percentile(latencies, 0.99),
          non2xx: result.non2xx,
          errors: result.errors,
          errorKinds: [...errorKinds].map(([kind, n]) => `${kind} ×${n}`).join(", "),
          total: result.requests.total
        })
      }
    )
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime)
    })
    instance.on("reqError", (error: unknown) => {
      const kind = typeof error === "object" && error !== null && "code" in error ? String(error.code) : String(error)
      errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1)
    })
  })
}

/**
 * Waits until the server has drained what the last run left in flight (autocannon stops on
 * time, not on its last answer): health, a `SELECT 1` through the pool, answers quickly twice.
 */
const settle = async (server: Server) => {
  const started = Date.now()
  let quick = 0
  while (quick < 2) {
    if (Date.now() - started > 120_000) throw childFailure(server.child, "was still busy 120 s after a run")
    const asked = Date.now()
    const response = await fetch(`${server.baseUrl}/api/v1/health`)
    await response.arrayBuffer()
    quick = response.status === 200 && Date.now() - asked < 50 ? quick + 1 : 0
    if (quick < 2) await sleep(100)
  }
  const waited = Date.now() - started
  if (waited > 1000) log(`  (${server.label} drained its backlog in ${seconds(waited)})`)
}

const describe = (m: Measurement) =>
  `${int(m.requestsPerSecond)} req/s, p50 ${ms2(m.p50)} ms, p99 ${ms2(m.p99)} ms` +
  (m.errors > 0 ? `, ${m.errors} connection errors (${m.errorKinds || "no detail"})` : "")

const labelWidth = 34

const warmUp = async (server: Server, scenarios: ReadonlyArray<Scenario>) => {
  const m = await load(server, scenarios.flatMap((s) => spread(s.paths, 20)), { duration: warmupSeconds })
  log(`  warm-up ${server.label}: ${describe(m)}`)
}

const runScenario = async (server: Server, scenario: Scenario) => {
  if (runWarmupSeconds > 0) await load(server, scenario.paths, { duration: runWarmupSeconds })
  const m = await load(server, scenario.paths, { duration: settings.seconds })
  log(`  ${scenario.title.padEnd(32)} ${server.label.padEnd(labelWidth)} ${describe(m)}`)
  return m
}

/**
 * An open-loop load at an even pace: one request every 1000 / rate ms, whatever the answers do,
 * over a keep-alive pool of `settings.connections` sockets. autocannon's `overallRate` instead lets
 * every connection send its whole per-second quota back to back at the start of each second, so
 * "200 req/s" arrives as a burst of 200 and the figures measure the burst's queue. Latency is
 * counted from the moment the request was due, so a server that falls behind pays for the
 * requests waiting on it (no coordinated omission).
 */
export const paced = async (server: Server, paths: ReadonlyArray<string>, rate: number, durationSeconds: number) => {
  await settle(server)
  const agent = new http.Agent({ keepAlive: true, maxSockets: settings.connections })
  const latencies: Array<number> = []
  const errorKinds = new Map<string, number>()
  let non2xx = 0
  const interval = 1000 / rate
  const total = Math.round(rate * durationSeconds)
  const started = performance.now()
  const inFlight: Array<Promise<void>> = []
  for (let i = 0; i < total; i++) {
    const due = started + i * interval
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    const requestPath = paths[i % paths.length]!
    inFlight.push(
      new Promise<void>((resolve) => {
        const request = http.get(`${server.baseUrl}${requestPath}`, { agent }, (response) => {
          response.resume()
          response.on("end", () => {
            if ((response.statusCode ?? 0) >= 300) non2xx++
            latencies.push(performance.now() - due)
            resolve()
          })
        })
        request.setTimeout(requestTimeoutSeconds * 1000, () => request.destroy(new Error("timeout")))
        request.on("error", (error) => {
          errorKinds.set(error.message, (errorKinds.get(error.message) ?? 0) + 1)
          resolve()
        })
      })
    )
  }
  await Promise.all(inFlight)
  const elapsed = (performance.now() - started) / 1000
  agent.destroy()
  if (!isRunning(server.child)) throw childFailure(server.child, "exited during the run")
  if (non2xx > 0) throw new Error(`${server.label}: ${non2xx} non-2xx responses at ${rate} req/s`)
  latencies.sort((x, y) => x - y)
  const measurement: Measurement = {
    requestsPerSecond: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    non2xx,
    errors: [...errorKinds.values()].reduce((n, count) => n + count, 0),
    errorKinds: [...errorKinds].map(([kind, count]) => `${kind} ×${count}`).join(", "),
    total: latencies.length
  }
  return measurement
}

const runFixedRate = async (server: Server, paths: ReadonlyArray<string>) => {
  // The paced run comes right after the other servers' heaviest runs, which this server waited through idle.
  if (runWarmupSeconds > 0) await paced(server, paths, settings.fixedRate, runWarmupSeconds)
  const m = await paced(server, paths, settings.fixedRate, settings.seconds)
  log(`  ${`search at ${settings.fixedRate} req/s`.padEnd(32)} ${server.label.padEnd(labelWidth)} ${describe(m)}`)
  return m
}

/** One server's figures: every scenario at full speed, and search at the fixed rate. */
export interface Run {
  readonly scenarios: ReadonlyMap<string, Measurement>
  readonly fixedRate: Measurement
}

/**
 * Measures the servers of one database. They take turns scenario by scenario, so that a change
 * in the machine's load (other work on these cores) falls on all of them alike.
 */
export const measureServers = async <K extends string>(
  servers: Record<K, Server>,
  scenarios: ReadonlyArray<Scenario>,
  searchPaths: ReadonlyArray<string>,
  /** Servers that answer some scenarios only (the search servers), and which. */
  only: Partial<Record<NoInfer<K>, (scenario: Scenario) => boolean>> = {}
): Promise<Record<K, Run>> => {
  const entries = Object.entries(servers) as Array<[K, Server]>
  const answers = (key: K, scenario: Scenario) => only[key]?.(scenario) ?? true
  for (const [key, server] of entries) {
    const answered = scenarios.filter((s) => answers(key, s))
    if (answered.length > 0) await warmUp(server, answered)
  }
  const measured = new Map(entries.map(([key]) => [key, new Map<string, Measurement>()]))
  for (const scenario of scenarios) {
    for (const [key, server] of entries) {
      if (answers(key, scenario)) measured.get(key)!.set(scenario.id, await runScenario(server, scenario))
    }
  }
  const runs = {} as Record<K, Run>
  for (const [key, server] of entries) {
    runs[key] = { scenarios: measured.get(key)!, fixedRate: await runFixedRate(server, searchPaths) }
  }
  return runs
}
