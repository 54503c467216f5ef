/**
 * `npm run bench:tracing`: what turning `CLARK_TRACING` on costs both services.
 *
 * 1. Builds the product (`tsc`) and starts the compiled node (`node bin/clark.js node serve`, fresh data
 *    dir) and the compiled marketplace (`node bin/clark.js marketplace serve --seed-demo-if-empty`, a
 *    fresh SQLite file with the demo catalogue), each twice: with tracing off (the default) and on.
 *    Nothing exports the spans: "on" measures making them, which is what every request pays.
 * 2. For each route, a warm-up second on each server, then BENCH_TRACING_ROUNDS rounds of the off and the
 *    on server in turn (so drift in the machine's load hits both alike), each run autocannon for
 *    BENCH_TRACING_SECONDS with BENCH_TRACING_CONNECTIONS keep-alive connections; the best run of each
 *    server is reported. Node: GET /health and GET /conversations with the local token (a SQLite
 *    read). Marketplace: GET /api/v1/health, a package detail, a search.
 * 3. Prints req/s and p50 / p99 side by side and rewrites its section of docs/benchmarks.md.
 *
 * Environment: BENCH_TRACING_SECONDS (default 3), BENCH_TRACING_CONNECTIONS (default 50),
 * BENCH_TRACING_ROUNDS (default 2).
 */
import autocannon from "autocannon"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assertRunning, type Child, childFailure, isRunning, killAll, startChild, stopAll } from "./Children.js"
import { build, freePort, log, otherWorkCores, otherWorkLimit, positiveInt, seconds, writeDocs } from "./Common.js"

const settings = {
  seconds: positiveInt("BENCH_TRACING_SECONDS", 3),
  connections: positiveInt("BENCH_TRACING_CONNECTIONS", 50),
  rounds: positiveInt("BENCH_TRACING_ROUNDS", 2)
}

type Tracing = "off" | "on"

interface Server {
  readonly child: Child
  readonly baseUrl: string
}

interface Route {
  readonly service: "node" | "marketplace"
  readonly path: string
  /** Per server: each node has its own local token. */
  readonly headers: (tracing: Tracing) => Record<string, string>
}

interface Figures {
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
}

const waitHealthy = async (server: Server, healthPath: string) => {
  const started = Date.now()
  for (;;) {
    assertRunning(server.child)
    if (Date.now() - started > 60_000) throw childFailure(server.child, `did not answer ${healthPath} within 60 s`)
    const healthy = await fetch(`${server.baseUrl}${healthPath}`, { signal: AbortSignal.timeout(1000) }).then(
      (response) => response.status === 200,
      () => false
    )
    if (healthy) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const start = async (name: string, args: ReadonlyArray<string>, env: Record<string, string>, healthPath: string) => {
  const port = await freePort()
  const child = startChild(name, [...args, "--port", String(port)], env)
  const server: Server = { child, baseUrl: `http://127.0.0.1:${port}` }
  log(`  ${name} healthy after ${seconds(await waitHealthy(server, healthPath))}`)
  return server
}

const cannon = (server: Server, route: Route, headers: Record<string, string>, duration: number) =>
  new Promise<Figures>((resolve, reject) => {
    autocannon(
      {
        url: `${server.baseUrl}${route.path}`,
        connections: settings.connections,
        duration,
        headers
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error)
        if (!isRunning(server.child)) return reject(childFailure(server.child, "exited during the run"))
        if (result.non2xx > 0 || result.errors > 0) {
          return reject(new Error(`GET ${route.path}: ${result.non2xx} answers not 2xx, ${result.errors} errors`))
        }
        resolve({ perSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 })
      }
    )
  })

/**
 * Rounds of off then on, each server warmed up first; the best round of each (highest req/s) is kept: on a
 * shared machine the least disturbed run is the closest to what the server can do.
 */
const measure = async (servers: Record<Tracing, Server>, route: Route) => {
  const runs: Record<Tracing, Array<Figures>> = { off: [], on: [] }
  for (const tracing of ["off", "on"] as const) await cannon(servers[tracing], route, route.headers(tracing), 1)
  for (let round = 0; round < settings.rounds; round++) {
    for (const tracing of ["off", "on"] as const) {
      const figures = await cannon(servers[tracing], route, route.headers(tracing), settings.seconds)
      runs[tracing].push(figures)
      log(
        `  ${route.service} GET ${route.path}, tracing ${tracing}: ${Math.round(figures.perSecond)} req/s, ` +
          `p50 ${figures.p50} ms, p99 ${figures.p99} ms`
      )
    }
  }
  const best = (all: ReadonlyArray<Figures>) => all.reduce((a, b) => (b.perSecond > a.perSecond ? b : a))
  return { route, figures: { off: best(runs.off), on: best(runs.on) } }
}

const int = (n: number) => Math.round(n).toLocaleString("en-US")
const change = (off: number, on: number) => `${on >= off ? "+" : ""}${(((on - off) / off) * 100).toFixed(1)} %`

const report = (rows: ReadonlyArray<Awaited<ReturnType<typeof measure>>>, otherWork: number, date: string) => {
  const lines = rows.map(({ figures: { off, on }, route }) =>
    `| ${route.service} | GET ${route.path.replace(/\?.*/, "?…")} | ${int(off.perSecond)} | ${int(on.perSecond)} | ${
      change(off.perSecond, on.perSecond)
    } | ${off.p50} / ${off.p99} | ${on.p50} / ${on.p99} |`
  )
  return `## Tracing

\`npm run bench:tracing\`, ${date}, Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "unknown"}).

- Servers: the compiled node (\`node bin/clark.js node serve\`, fresh data dir) and marketplace (\`node bin/clark.js marketplace serve --seed-demo-if-empty\`, fresh SQLite file, read cache on as shipped), each started twice, with \`CLARK_TRACING=off\` (the default) and \`on\`; default logging. With tracing on every request makes its \`http.server\` span and the handler's and SQL statements' spans under it; nothing exports them.
- Load: autocannon, ${settings.connections} keep-alive connections, ${settings.seconds} s per run after a 1-second warm-up; ${settings.rounds} rounds of the off then the on server per route, the best run of each reported (highest req/s, with its latencies). Search: \`${
    rows.find((row) => row.route.path.includes("search"))?.route.path ?? "none"
  }\`.
- Other work on the machine before the runs: ${otherWork.toFixed(2)} cores${
    otherWork > otherWorkLimit ? " (**more than a quarter of a core: the figures are understated**)" : ""
  }.

| service | route | off req/s | on req/s | change | off p50 / p99 ms | on p50 / p99 ms |
| --- | --- | --- | --- | --- | --- | --- |
${lines.join("\n")}
`
}

const main = async () => {
  build("servers")
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-tracing-"))
  try {
    const database = `sqlite:${path.join(tmp, "marketplace.db")}`
    // Started together to save time; the first marketplace seeds the file, the second finds it seeded.
    const [nodeOff, nodeOn, marketplaceOff] = await Promise.all([
      start(
        "node (tracing off)",
        ["bin/clark.js", "node", "serve", "--data-dir", path.join(tmp, "node-off")],
        { CLARK_TRACING: "off", CC_APP_SECRET: "bench" },
        "/health"
      ),
      start(
        "node (tracing on)",
        ["bin/clark.js", "node", "serve", "--data-dir", path.join(tmp, "node-on")],
        { CLARK_TRACING: "on", CC_APP_SECRET: "bench" },
        "/health"
      ),
      start(
        "marketplace (tracing off)",
        ["bin/clark.js", "marketplace", "serve", "--database", database, "--seed-demo-if-empty"],
        { CLARK_TRACING: "off" },
        "/api/v1/health"
      )
    ])
    const node: Record<Tracing, Server> = { off: nodeOff, on: nodeOn }
    const marketplace: Record<Tracing, Server> = {
      off: marketplaceOff,
      on: await start(
        "marketplace (tracing on)",
        ["bin/clark.js", "marketplace", "serve", "--database", database],
        { CLARK_TRACING: "on" },
        "/api/v1/health"
      )
    }
    const tokenOf = (tracing: Tracing) =>
      String(JSON.parse(fs.readFileSync(path.join(tmp, `node-${tracing}`, "identity.json"), "utf8")).localToken)
    const page = (await fetch(`${marketplace.off.baseUrl}/api/v1/packages?limit=1`).then((response) => response.json())) as {
      readonly items?: ReadonlyArray<{ readonly name?: string }>
    }
    const name = page.items?.[0]?.name ?? ""
    if (name === "") throw new Error(`no package in the demo catalogue: ${JSON.stringify(page).slice(0, 300)}`)
    const word = name.replace(/^@[^/]+\//, "").split("-")[0]!
    const otherWork = await otherWorkCores()
    log(`Other work on the machine: ${otherWork.toFixed(2)} cores`)
    const rows = []
    const none = () => ({})
    rows.push(await measure(node, { service: "node", path: "/health", headers: none }))
    rows.push(
      await measure(node, {
        service: "node",
        path: "/conversations",
        headers: (tracing) => ({ authorization: `Bearer ${tokenOf(tracing)}` })
      })
    )
    for (const routePath of ["/api/v1/health", `/api/v1/packages/${encodeURIComponent(name)}`, `/api/v1/search?q=${word}`]) {
      rows.push(await measure(marketplace, { service: "marketplace", path: routePath, headers: none }))
    }
    const section = report(rows, otherWork, new Date().toISOString().slice(0, 10))
    log(`\n${section}`)
    log(`Written to ${writeDocs("tracing", section)}`)
  } finally {
    await stopAll()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

// Ctrl-C or a kill: the child servers go too.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAll()
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
