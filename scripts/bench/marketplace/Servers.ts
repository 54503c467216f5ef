/** The servers under test, as child processes: the compiled product, the plain baseline, the before/after search servers. */
import { assertRunning, type Child, childFailure, startChild } from "../Children.js"
import { freePort, log, seconds } from "../Common.js"
import { sleep } from "./Settings.js"

const waitHealthy = async (child: Child, baseUrl: string) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    assertRunning(child)
    try {
      // Bounded: a request that reaches a server between listening and installing its handler gets no answer.
      const response = await fetch(`${baseUrl}/api/v1/health`, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      if (response.status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  throw childFailure(child, "did not answer GET /api/v1/health with 200 within 60 s")
}

export interface Server {
  readonly label: string
  readonly baseUrl: string
  readonly child: Child
}

const startServer = async (
  label: string,
  args: ReadonlyArray<string>,
  env?: Record<string, string>,
  cwd?: string
): Promise<Server> => {
  const child = startChild(label, args, env, false, cwd)
  const baseUrl = `http://127.0.0.1:${args[args.length - 1]}`
  const started = Date.now()
  await waitHealthy(child, baseUrl)
  log(`  ${label} healthy at ${baseUrl} after ${seconds(Date.now() - started)}`)
  return { label, baseUrl, child }
}

/**
 * The warning level. The README names it `Warning`, but the server reads LOG_LEVEL with Effect's
 * `Config.logLevel`, which only knows ALL, FATAL, ERROR, WARN, INFO, DEBUG, TRACE and OFF and
 * refuses `Warning` at startup; `Warn` is the same level.
 */
export const warningLogLevel = "Warn"

type ReadCache = "on" | "off"

/**
 * BENCH_PRODUCT_NODE_OPTIONS: Node flags for the product's servers only (not the bench, the baseline or the search
 * servers), e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` or `--max-semi-space-size=32`, separated by spaces. They
 * go on the server's command line, not into NODE_OPTIONS, which refuses `--cpu-prof`. A profile is written when
 * the bench stops the server: SIGTERM interrupts its main fiber and the runtime ends the process with
 * `process.exit`, which writes it.
 */
export const productNodeOptions = process.env.BENCH_PRODUCT_NODE_OPTIONS

const flagsOf = (options: string | undefined) => (options ?? "").split(/\s+/).filter((flag) => flag !== "")

export const startMarketplace = async (
  label: string,
  database: string,
  readCache: ReadCache,
  options: { readonly cwd?: string; readonly nodeOptions?: string | undefined } = {}
) =>
  startServer(label, [
    ...flagsOf(options.nodeOptions ?? productNodeOptions),
    "bin/clark.js",
    "marketplace",
    "serve",
    "--database",
    database,
    "--port",
    String(await freePort())
  ], {
    LOG_LEVEL: warningLogLevel,
    MARKETPLACE_READ_CACHE: readCache,
    // One load generator is one client address: limited, nearly every request would be a 429.
    MARKETPLACE_RATE_LIMITS: "off"
  }, options.cwd)

export const startBaseline = async (database: string) =>
  startServer("baseline (node:http + pg)", [
    "--import",
    "tsx",
    "scripts/bench/baseline-server.ts",
    "--database",
    database,
    "--port",
    String(await freePort())
  ])

export const startSearchServer = async (store: "before" | "after" | "walk", database: string, label: string) =>
  startServer(label, [
    "--import",
    "tsx",
    "scripts/bench/marketplace/SearchServer.ts",
    "--store",
    store,
    "--database",
    database,
    "--port",
    String(await freePort())
  ], { LOG_LEVEL: warningLogLevel, MARKETPLACE_READ_CACHE: "off", MARKETPLACE_RATE_LIMITS: "off" })
