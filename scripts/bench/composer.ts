/**
 * `npm run bench:composer`: GET /composer/suggestions (`@`) over an approved project of BENCH_COMPOSER_FILES
 * files (default 100,000), beside a plain directory walk that answers the same queries, in the same run.
 *
 * 1. Writes the project under the system's temporary folder: 1,000 folders of 100 files (names vary, so the
 *    queries match some and not others), plus links and a `.git` folder that the walk leaves out.
 * 2. Starts the real node in this process (the TypeScript sources through tsx, on a fresh data dir, no
 *    model), listening on a loopback port; approves the folder as the person.
 * 3. The first suggestion (it walks the folder and keeps the index), then BENCH_COMPOSER_REQUESTS requests
 *    one at a time over real HTTP, cycling through the queries; latency per request.
 * 4. The floor: GET /node (the cheapest authenticated route) on the same node. The baseline: a plain
 *    recursive `readdir` of the folder followed by the same matching, for BENCH_COMPOSER_WALKS of the queries.
 * 5. Prints the table and rewrites its section of docs/benchmarks.md.
 */
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as ProjectIndex from "../../layers/node/composer/ProjectIndex.js"
import * as NoModel from "../../layers/node/model/NoModel.js"
import { serve } from "../../src/node/Server.js"
import { freePort, log, otherWorkCores, otherWorkLimit, percentile, positiveInt, writeDocs } from "./Common.js"

const settings = {
  files: positiveInt("BENCH_COMPOSER_FILES", 100_000),
  requests: positiveInt("BENCH_COMPOSER_REQUESTS", 1_000),
  walks: positiveInt("BENCH_COMPOSER_WALKS", 20)
}

const queries = ["", "src", "index", "util", "str", "file-0042", "component", "readme", "zz-no-match", "mod-7/", "test", "a"]
const words = ["index", "component", "util", "strings", "readme", "service", "model", "view", "test", "config"]

const makeProject = () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-composer-"))
  const project = path.join(root, "project")
  const perFolder = 100
  const folders = Math.ceil(settings.files / perFolder)
  for (let f = 0; f < folders; f++) {
    const folder = path.join(project, `src/mod-${f % 10}/part-${String(f).padStart(4, "0")}`)
    fs.mkdirSync(folder, { recursive: true })
    for (let i = 0; i < perFolder && f * perFolder + i < settings.files; i++) {
      const n = f * perFolder + i
      fs.writeFileSync(path.join(folder, `${words[n % words.length]}-file-${String(n % 10_000).padStart(4, "0")}.ts`), "")
    }
  }
  fs.mkdirSync(path.join(project, ".git"))
  fs.symlinkSync(os.tmpdir(), path.join(project, "outside"))
  return { root, project }
}

/** The baseline: what a suggestion costs without the index — walk, then the same matching. */
const walkAndMatch = async (folder: string, query: string) => {
  const { entries } = await ProjectIndex.walk(folder, 10_000_000)
  return ProjectIndex.best(entries, query.toLowerCase(), 8)
}

const stats = (samples: Array<number>) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? Number.NaN, count: sorted.length }
}

const ms = (value: number) => `${value.toFixed(2)} ms`

const main = async () => {
  log(`Writing a project of ${settings.files.toLocaleString("en")} files`)
  const started = performance.now()
  const { project, root } = makeProject()
  log(`  written in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-node-"))
  const port = await freePort()
  const appSecret = "bench-app-secret"
  const scope = Effect.runSync(Scope.make())
  await Effect.runPromise(
    Layer.buildWithScope(
      serve({ dataDir, appSecret: Redacted.make(appSecret), model: NoModel.layer, host: "127.0.0.1", port, marketplaceUrl: null, registryUrl: null }),
      scope
    )
  )
  const token = JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken as string
  const base = `http://127.0.0.1:${port}`
  const headers = { authorization: `Bearer ${token}`, "x-app-secret": appSecret, "content-type": "application/json" }
  try {
    const approved = await fetch(`${base}/preferences/composer.projectFolders`, {
      method: "PUT",
      headers,
      body: JSON.stringify({ value: [project] })
    })
    if (approved.status !== 200) throw new Error(`approving the folder answered ${approved.status}`)
    const get = async (q: string) => {
      const began = performance.now()
      const response = await fetch(`${base}/composer/suggestions?trigger=%40&q=${encodeURIComponent(q)}`, { headers })
      const body = await response.json() as { suggestions: Array<unknown> }
      if (response.status !== 200 || body.suggestions.length > 8) throw new Error(`suggestions answered ${response.status}`)
      return performance.now() - began
    }
    const first = await get("index")
    const other = await otherWorkCores()
    const node: Array<number> = []
    for (let i = 0; i < settings.requests; i++) node.push(await get(queries[i % queries.length]!))
    // The floor under these figures on this machine: the cheapest authenticated route, in the same run.
    const floor: Array<number> = []
    for (let i = 0; i < Math.min(settings.requests, 300); i++) {
      const began = performance.now()
      await (await fetch(`${base}/node`, { headers })).text()
      floor.push(performance.now() - began)
    }
    const walk: Array<number> = []
    for (let i = 0; i < settings.walks; i++) {
      const began = performance.now()
      await walkAndMatch(project, queries[i % queries.length]!)
      walk.push(performance.now() - began)
    }
    const n = stats(node)
    const w = stats(walk)
    const f = stats(floor)
    const table = [
      `Suggestions (\`@\`) over an approved project of ${settings.files.toLocaleString("en")} files, one request at a time over loopback HTTP to the node running in the benchmark's process (TypeScript sources through tsx), ${queries.length} queries in turn. Target: p99 ≤ 30 ms.`,
      "",
      "| Run | Count | p50 | p99 | Max |",
      "|---|---|---|---|---|",
      `| GET /composer/suggestions (kept index) | ${n.count} | ${ms(n.p50)} | ${ms(n.p99)} | ${ms(n.max)} |`,
      `| Baseline: plain directory walk, then the same matching | ${w.count} | ${ms(w.p50)} | ${ms(w.p99)} | ${ms(w.max)} |`,
      `| First suggestion (walks the folder and keeps the index) | 1 | ${ms(first)} | | |`,
      `| Floor: GET /node over the same connection | ${f.count} | ${ms(f.p50)} | ${ms(f.p99)} | ${ms(f.max)} |`,
      "",
      `Other work on the machine while measuring: ${other.toFixed(2)} cores${
        other > otherWorkLimit ? " (a loaded machine: figures understated)" : ""
      }. Settings: BENCH_COMPOSER_FILES, BENCH_COMPOSER_REQUESTS, BENCH_COMPOSER_WALKS.`
    ].join("\n")
    log("")
    log(table)
    const file = writeDocs("composer", `## bench:composer\n\n${table}\n`)
    log(`\nWrote ${path.relative(process.cwd(), file)}`)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(root, { recursive: true, force: true })
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
