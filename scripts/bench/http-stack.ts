/**
 * `npm run bench:http`: what our HTTP stack costs per request, apart from any handler or SQL work.
 *
 * Four servers answer the same two routes (a small JSON GET and a small JSON POST echoed back; see
 * scripts/bench/http-stack/server.ts): (a) plain node:http, (b) a bare HttpApi on the same platform server,
 * (c) the marketplace's stack, (d) the node's stack. With BENCH_BASELINE_REF set, (c) and (d) also run from that
 * commit's sources (a temporary git worktree), so a change to the stack is measured before and after in one run.
 *
 * For each route: a warm-up second on every server, then BENCH_HTTP_ROUNDS rounds of every server in turn (drift
 * in the machine's load hits all alike), each an autocannon run of BENCH_HTTP_SECONDS with BENCH_HTTP_CONNECTIONS
 * keep-alive connections. The server's CPU time (user + system, from /proc) over a run divided by the requests it
 * answered is its CPU per request; the median of the rounds is reported with the median p99.
 *
 * Environment: BENCH_HTTP_SECONDS (default 3), BENCH_HTTP_CONNECTIONS (50), BENCH_HTTP_ROUNDS (3),
 * BENCH_BASELINE_REF (a commit; default none), BENCH_HTTP_PROFILE (a directory: the servers run with `--cpu-prof`
 * and write their profiles there when stopped; the docs are not written then).
 */
import autocannon from "autocannon"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assertRunning, type Child, childFailure, isRunning, killAll, startChild, stopAll } from "./Children.js"
import { freePort, log, otherWorkCores, otherWorkLimit, percentile, positiveInt, root, writeDocs } from "./Common.js"
import { checkoutBaseline, removeBaseline } from "./node/builds.js"

const settings = {
  seconds: positiveInt("BENCH_HTTP_SECONDS", 3),
  connections: positiveInt("BENCH_HTTP_CONNECTIONS", 50),
  rounds: positiveInt("BENCH_HTTP_ROUNDS", 3),
  baselineRef: (() => {
    const raw = (process.env.BENCH_BASELINE_REF ?? "").trim()
    return raw === "" || raw === "none" ? undefined : raw
  })(),
  profileDir: (process.env.BENCH_HTTP_PROFILE ?? "").trim() || undefined
}

const token = "bench-token-0123456789"

type Variant = "plain" | "fiber" | "router" | "bare" | "marketplace" | "node"

interface Server {
  readonly label: string
  readonly variant: Variant
  readonly child: Child
  readonly baseUrl: string
}

interface Route {
  readonly name: string
  readonly method: "GET" | "POST"
  readonly path: (variant: Variant) => string
  /** The variants that serve it (all when absent). */
  readonly only?: ReadonlyArray<Variant>
}

interface Figures {
  readonly perSecond: number
  readonly p99: number
  readonly cpuUsPerRequest: number
}

const prefix = (variant: Variant) => (variant === "marketplace" ? "/api/v1" : "")
const routes: ReadonlyArray<Route> = [
  { name: "GET (small JSON)", method: "GET", path: (v) => `${prefix(v)}/bench/ping` },
  { name: "POST (small JSON body, echoed)", method: "POST", path: (v) => `${prefix(v)}/bench/echo` },
  {
    name: "GET SSE (four events, then the end)",
    method: "GET",
    path: () => "/bench/events",
    only: ["plain", "fiber", "router", "bare", "node"]
  }
]
const postBody = JSON.stringify({ name: "bench", count: 3, note: "a small body" })

/** User + system CPU of a process, in µs (clock ticks of 10 ms). */
const cpuMicros = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

const start = async (label: string, variant: Variant, checkout: string): Promise<Server> => {
  const port = await freePort()
  const flags = settings.profileDir === undefined
    ? []
    : // One directory per server: the loader's thread writes a profile of its own.
      ["--cpu-prof", `--cpu-prof-dir=${path.join(settings.profileDir, label.replace(/\W+/g, "-").replace(/^-|-$/g, ""))}`]
  const child = startChild(label, [
    ...flags,
    "--import",
    "tsx",
    path.join(root, "scripts/bench/http-stack/server.ts"),
    "--variant",
    variant,
    "--root",
    checkout,
    "--port",
    String(port)
  ], { MARKETPLACE_RATE_LIMITS: "off", LOG_LEVEL: "Warn" }, false, checkout)
  const server = { label, variant, child, baseUrl: `http://127.0.0.1:${port}` }
  const deadline = Date.now() + 60_000
  for (;;) {
    assertRunning(child)
    if (Date.now() > deadline) throw childFailure(child, "did not answer within 60 s")
    const ok = await fetch(`${server.baseUrl}${routes[0]!.path(variant)}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(1000)
    }).then((response) => response.status === 200, () => false)
    if (ok) return server
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const cannon = (server: Server, route: Route, duration: number) =>
  new Promise<Figures>((resolve, reject) => {
    const pid = server.child.process.pid!
    const before = cpuMicros(pid)
    autocannon(
      {
        url: `${server.baseUrl}${route.path(server.variant)}`,
        method: route.method,
        connections: settings.connections,
        duration,
        headers: {
          authorization: `Bearer ${token}`,
          ...(route.method === "POST" ? { "content-type": "application/json" } : {})
        },
        ...(route.method === "POST" ? { body: postBody } : {})
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error)
        if (!isRunning(server.child)) return reject(childFailure(server.child, "exited during the run"))
        if (result.non2xx > 0 || result.errors > 0) {
          return reject(new Error(`${server.label} ${route.name}: ${result.non2xx} answers not 2xx, ${result.errors} errors`))
        }
        const cpu = cpuMicros(pid) - before
        resolve({ perSecond: result.requests.average, p99: result.latency.p99, cpuUsPerRequest: cpu / result.requests.total })
      }
    )
  })

const median = (values: ReadonlyArray<number>) => percentile([...values].sort((a, b) => a - b), 0.5)

const measure = async (servers: ReadonlyArray<Server>, route: Route) => {
  for (const server of servers) await cannon(server, route, 1)
  const runs = new Map<Server, Array<Figures>>(servers.map((server) => [server, []]))
  for (let round = 0; round < settings.rounds; round++) {
    for (const server of servers) {
      const figures = await cannon(server, route, settings.seconds)
      runs.get(server)!.push(figures)
      log(
        `  ${route.name}, ${server.label}: ${Math.round(figures.perSecond)} req/s, p99 ${figures.p99} ms, ` +
          `${Math.round(figures.cpuUsPerRequest)} µs CPU per request`
      )
    }
  }
  return servers.map((server) => {
    const all = runs.get(server)!
    return {
      server,
      perSecond: median(all.map((f) => f.perSecond)),
      p99: median(all.map((f) => f.p99)),
      cpuUsPerRequest: median(all.map((f) => f.cpuUsPerRequest))
    }
  })
}

const report = (
  results: ReadonlyArray<{ readonly route: Route; readonly rows: Awaited<ReturnType<typeof measure>> }>,
  otherWork: number,
  baseline: string | undefined
) => {
  const tables = results.map(({ route, rows }) => {
    const plain = rows.find((row) => row.server.variant === "plain")!
    const bare = rows.find((row) => row.server.variant === "bare")!
    const lines = rows.map((row) =>
      `| ${row.server.label} | ${Math.round(row.cpuUsPerRequest)} | ${(row.cpuUsPerRequest / plain.cpuUsPerRequest).toFixed(1)}× | ${
        Math.round(row.cpuUsPerRequest - bare.cpuUsPerRequest)
      } | ${Math.round(row.perSecond).toLocaleString("en-US")} | ${row.p99} |`
    )
    return `**${route.name}**\n\n| server | CPU µs / request | × plain | µs over bare HttpApi | req/s | p99 ms |\n| --- | --- | --- | --- | --- | --- |\n${
      lines.join("\n")
    }`
  })
  return `## HTTP stack per request

\`npm run bench:http\`, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${os.cpus().length} cores (${
    os.cpus()[0]?.model ?? "unknown"
  }).

- Servers (scripts/bench/http-stack/server.ts): the same routes, a GET answering a 172-byte JSON object, a POST echoing a small JSON body and a GET answering four SSE events (the node's shape: the opening comment, three deltas and \`done\`, then the end), through (a) plain node:http, (a') node:http running each request as one Effect fiber (the SSE response as an Effect Stream run) and nothing of the platform, (a'') the platform's \`HttpRouter\` on \`NodeHttpServer\` without HttpApi (the server adapter and router alone), (b) a bare HttpApi on \`NodeHttpServer\` (tracing off, as both services run by default), (c) the marketplace's stack (\`serveApi\`, its server factory, error envelope, rate-limiting middleware with \`MARKETPLACE_RATE_LIMITS=off\` as bench:marketplace runs it, services over SQLite) and (d) the node's (bearer \`Authenticated\` middleware, error mapping with guarded bodies, \`serveApi\`, its server factory; its SSE route answers with the node's own \`Sse.response\`; the marketplace has no SSE route)${
    baseline === undefined ? "" : `; (c) and (d) also from ${baseline} (before)`
  }. Each is run with \`node --import tsx\` from its checkout.
- Load: autocannon in the driver process, ${settings.connections} keep-alive connections, ${settings.seconds} s per run after a 1-second warm-up, ${settings.rounds} rounds of every server in turn; medians of the rounds. CPU per request: the server process's user + system time over the run (/proc, 10 ms ticks) divided by the requests answered.
- Other work on the machine before the runs: ${otherWork.toFixed(2)} cores${
    otherWork > otherWorkLimit ? " (**more than a quarter of a core: absolute figures are understated; compare within the run**)" : ""
  }.

${tables.join("\n\n")}
`
}

const main = async () => {
  const baseline = settings.baselineRef === undefined ? undefined : checkoutBaseline(settings.baselineRef)
  if (settings.profileDir !== undefined) fs.mkdirSync(settings.profileDir, { recursive: true })
  try {
    const servers: Array<Server> = []
    const after = baseline === undefined ? "" : " (after)"
    servers.push(await start("(a) plain node:http", "plain", root))
    servers.push(await start("(a') node:http, a fiber per request", "fiber", root))
    servers.push(await start("(a'') HttpRouter, no HttpApi", "router", root))
    servers.push(await start("(b) bare HttpApi", "bare", root))
    if (baseline !== undefined) servers.push(await start(`(c) marketplace stack (before, ${baseline.commit})`, "marketplace", baseline.dir))
    servers.push(await start(`(c) marketplace stack${after}`, "marketplace", root))
    if (baseline !== undefined) servers.push(await start(`(d) node stack (before, ${baseline.commit})`, "node", baseline.dir))
    servers.push(await start(`(d) node stack${after}`, "node", root))
    const otherWork = await otherWorkCores()
    log(`Other work on the machine: ${otherWork.toFixed(2)} cores`)
    const results = []
    for (const route of routes) {
      const serving = servers.filter((server) => route.only === undefined || route.only.includes(server.variant))
      results.push({ route, rows: await measure(serving, route) })
    }
    const section = report(results, otherWork, baseline === undefined ? undefined : `${baseline.commit} (${baseline.subject})`)
    log(`\n${section}`)
    if (settings.profileDir === undefined) log(`Written to ${writeDocs("http-stack", section)}`)
  } finally {
    await stopAll()
    removeBaseline()
  }
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAll()
    removeBaseline()
    process.exit(130)
  })
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`\nBenchmark failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
