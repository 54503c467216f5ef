/**
 * `npm run bench:startup`: how long `clark` takes to start, before and after, in one run.
 *
 * 1. Builds this tree (`npm run build`: tsc, then the bundle) and the baseline commit (BENCH_BASELINE,
 *    default e7135c2, the code before the start-up work) in a temporary git worktree with this tree's
 *    node_modules linked in (`tsc`, the build of that commit). The worktree is removed at the end.
 * 2. Times, in rounds that take each measure in turn (so both builds see the same machine):
 *    - floor: `node -e` creating a node:http server on a port, until it answers one GET;
 *    - version: `clark --version`, until it exits;
 *    - serve, new data dir: `clark node serve` on an empty temporary data dir, until `GET /health` is 200;
 *    - serve, existing data dir: the same on a data dir a previous start created;
 *    - serve without a code cache: the same with CLARK_CODE_CACHE=off (bin/clark.js), as a start runs when no cache
 *      was written (the build writes `node serve`'s, scripts/bundle.mjs); a baseline without the cache runs as before.
 *    Every build keeps its code cache in the benchmark's temporary dir (CLARK_CODE_CACHE), written by the
 *    unmeasured start that makes the existing data dir, so a cache left by earlier runs plays no part.
 *    Every server is polled the same way (a GET every 2 ms) and stopped with SIGTERM after its answer.
 *    Besides the wall time, the CPU time the child used (user + system, from /proc), which other work on
 *    the machine inflates less.
 * 3. Prints the table and rewrites its section of docs/benchmarks.md.
 *
 * Environment: BENCH_RUNS (default 10 rounds), BENCH_BASELINE (commit, default e7135c2).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { freePort, log, otherWorkCores, otherWorkLimit, percentile, positiveInt, root, seconds, writeDocs } from "./Common.js"

const runs = positiveInt("BENCH_RUNS", 10)
const baselineCommit = process.env["BENCH_BASELINE"] || "e7135c2"
/** The target of issue 11: the host app waits on the node's first healthy `/health`. */
const serveTarget = 500

const run = (what: string, command: string, args: ReadonlyArray<string>, cwd: string) => {
  const result = spawnSync(command, args, { cwd, stdio: ["ignore", "inherit", "inherit"] })
  if (result.status !== 0) throw new Error(`${what} failed (${result.status ?? result.signal})`)
}

// ---------------------------------------------------------------------------
// builds

interface Build {
  readonly name: string
  readonly bin: string
}

const buildCurrent = (): Build => {
  log("Building this tree (npm run build)")
  const started = Date.now()
  run("npm run build", "npm", ["run", "build"], root)
  log(`  built in ${seconds(Date.now() - started)}`)
  return { name: "after", bin: path.join(root, "bin/clark.js") }
}

const buildBaseline = (dir: string): Build => {
  log(`Building ${baselineCommit} in a temporary worktree (${dir})`)
  const started = Date.now()
  run("git worktree add", "git", ["worktree", "add", "--detach", dir, baselineCommit], root)
  // Its own dependencies when they differ from this checkout's: linked to today's, a commit that imports a package
  // since dropped would not build (the baseline runs in processes of its own, so nothing is shared).
  const lock = (where: string) => fs.readFileSync(path.join(where, "package-lock.json"), "utf8")
  if (lock(dir) !== lock(root)) run(`npm ci in the ${baselineCommit} worktree`, "npm", ["ci", "--no-audit", "--no-fund"], dir)
  else fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"))
  // A commit with the bundle is built as it ships (its own `npm run build`); an older one with tsc alone.
  if (fs.existsSync(path.join(dir, "scripts/bundle.mjs"))) run(`npm run build in the ${baselineCommit} worktree`, "npm", ["run", "build"], dir)
  else run(`tsc in the ${baselineCommit} worktree`, process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], dir)
  log(`  built in ${seconds(Date.now() - started)}`)
  return { name: `before (${baselineCommit})`, bin: path.join(dir, "bin/clark.js") }
}

const removeBaseline = (dir: string) => {
  if (!fs.existsSync(dir)) return
  spawnSync("git", ["worktree", "remove", "--force", dir], { cwd: root, stdio: "ignore" })
  fs.rmSync(dir, { recursive: true, force: true })
  spawnSync("git", ["worktree", "prune"], { cwd: root, stdio: "ignore" })
}

// ---------------------------------------------------------------------------
// one measurement

interface Sample {
  readonly ms: number
  readonly cpuMs: number
}

const ticksPerSecond = 100

/** CPU time (user + system) a running process has used, in ms. */
const cpuMs = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    child.once("exit", (code) => resolve(code))
  })

const answers = (port: number, pathname: string) =>
  new Promise<number | undefined>((resolve) => {
    const request = http.get({ host: "127.0.0.1", port, path: pathname, agent: false }, (response) => {
      response.resume()
      response.once("end", () => resolve(response.statusCode))
    })
    request.once("error", () => resolve(undefined))
  })

const collect = (child: ChildProcess) => {
  let output = ""
  child.stdout?.on("data", (chunk) => (output += String(chunk)))
  child.stderr?.on("data", (chunk) => (output += String(chunk)))
  return () => output.slice(-4000)
}

/** Starts `args` with Node and times it until GET `pathname` on `port` answers 200. */
const untilAnswer = async (args: ReadonlyArray<string>, port: number, pathname: string, env: NodeJS.ProcessEnv = {}) => {
  const started = performance.now()
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  const output = collect(child)
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${child.exitCode}:\n${output()}`)
      if ((await answers(port, pathname)) === 200) break
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    return { ms: performance.now() - started, cpuMs: cpuMs(child.pid!) }
  } finally {
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
    await exited(child)
    clearTimeout(timer)
  }
}

/** Starts `args` with Node and times it until it exits, with its CPU time from the kernel's accounting. */
const untilExit = (args: ReadonlyArray<string>) =>
  new Promise<Sample>((resolve, reject) => {
    const started = performance.now()
    const child = spawn("/usr/bin/time", ["-f", "%U %S", process.execPath, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    child.stdout.resume()
    child.stderr.on("data", (chunk) => (stderr += String(chunk)))
    child.once("exit", (code) => {
      const ms = performance.now() - started
      const [user, system] = stderr.trim().split("\n").at(-1)!.split(" ").map(Number)
      if (code !== 0 || user === undefined || system === undefined) {
        return reject(new Error(`${args.join(" ")} exited with ${code}: ${stderr}`))
      }
      resolve({ ms, cpuMs: (user + system) * 1000 })
    })
  })

const floorScript = (port: number) =>
  `require("node:http").createServer((q, s) => s.end("ok")).listen(${port}, "127.0.0.1")`

const serve = async (build: Build, dataDir: string, codeCache: string) => {
  const port = await freePort()
  return untilAnswer([build.bin, "node", "serve", "--data-dir", dataDir, "--port", String(port)], port, "/health", {
    CC_APP_SECRET: "bench-startup-app-secret",
    CLARK_CODE_CACHE: codeCache
  })
}

// ---------------------------------------------------------------------------
// report

const measures = ["floor", "version", "serveNew", "serveExisting", "serveUncached"] as const
type Measure = typeof measures[number]

const labels: Record<Measure, string> = {
  floor: "`node -e` node:http listening, until one GET answers (the floor)",
  version: "`clark --version`",
  serveNew: "`clark node serve`, new data dir, until `GET /health` is 200",
  serveExisting: "`clark node serve`, existing data dir, until `GET /health` is 200",
  serveUncached: "`clark node serve`, existing data dir, without a code cache (`CLARK_CODE_CACHE=off`)"
}

const stats = (samples: ReadonlyArray<Sample>) => {
  const wall = samples.map((s) => s.ms).sort((a, b) => a - b)
  const cpu = samples.map((s) => s.cpuMs).sort((a, b) => a - b)
  return { median: percentile(wall, 0.5), p90: percentile(wall, 0.9), cpu: percentile(cpu, 0.5) }
}

const ms = (value: number) => `${Math.round(value)} ms`

const main = async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-startup-"))
  const baselineDir = path.join(tmp, "baseline")
  try {
    const builds = [buildBaseline(baselineDir), buildCurrent()]
    const samples = new Map<string, Array<Sample>>()
    const add = (key: string, sample: Sample) => samples.set(key, [...(samples.get(key) ?? []), sample])
    const existing = new Map(builds.map((b) => [b.name, path.join(tmp, `existing-${builds.indexOf(b)}`)]))
    const codeCache = new Map(builds.map((b) => [b.name, path.join(tmp, `code-cache-${builds.indexOf(b)}`)]))

    const otherWork = await otherWorkCores()
    log(`Other work on the machine before the runs: ${otherWork.toFixed(2)} cores`)
    // The existing data dirs are made by one start each, not measured; it writes the build's code cache too.
    for (const build of builds) await serve(build, existing.get(build.name)!, codeCache.get(build.name)!)

    const started = Date.now()
    for (let round = 1; round <= runs; round++) {
      const floorPort = await freePort()
      add("floor", await untilAnswer(["-e", floorScript(floorPort)], floorPort, "/"))
      for (const build of builds) {
        add(`${build.name}:version`, await untilExit([build.bin, "--version"]))
        const fresh = fs.mkdtempSync(path.join(tmp, "new-"))
        add(`${build.name}:serveNew`, await serve(build, fresh, codeCache.get(build.name)!))
        fs.rmSync(fresh, { recursive: true, force: true })
        add(`${build.name}:serveExisting`, await serve(build, existing.get(build.name)!, codeCache.get(build.name)!))
        add(`${build.name}:serveUncached`, await serve(build, existing.get(build.name)!, "off"))
      }
      log(`  round ${round}/${runs} done (${seconds(Date.now() - started)})`)
    }

    const floor = stats(samples.get("floor")!)
    const rows = measures.map((measure) => {
      if (measure === "floor") {
        return `| ${labels.floor} | ${ms(floor.median)} / ${ms(floor.p90)} (${ms(floor.cpu)}) | same |`
      }
      const cells = builds.map((build) => {
        const s = stats(samples.get(`${build.name}:${measure}`)!)
        return `${ms(s.median)} / ${ms(s.p90)} (${ms(s.cpu)})`
      })
      return `| ${labels[measure]} | ${cells.join(" | ")} |`
    })
    const after = builds[1]!.name
    const serveMedians = (["serveNew", "serveExisting"] as const).map((m) => stats(samples.get(`${after}:${m}`)!).median)
    const met = serveMedians.every((m) => m <= serveTarget)
    const table = [
      `| ${runs} rounds; median / p90 of the wall time (median CPU time of the process) | ${builds[0]!.name} | ${after} |`,
      "| --- | --- | --- |",
      ...rows
    ].join("\n")
    console.log(`\n${table}\n`)
    log(`Serve target ${serveTarget} ms (median, both data dirs): ${met ? "met" : "not met"}`)

    const busy = otherWork > otherWorkLimit
      ? `\n\n**Other work** kept ${otherWork.toFixed(2)} cores busy before the runs (more than ${otherWorkLimit}): the wall times are overstated; the CPU times, which another process's work inflates less, are the better comparison.`
      : ""
    const section = `## Start-up

\`npm run bench:startup\`, ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "CPU"}, Node ${process.version}. Before: the commit ${baselineCommit} built as it shipped in a temporary worktree (\`npm run build\`, or tsc before the bundle existed); after: this tree built with \`npm run build\` (tsc, then the esbuild bundle, which \`bin/clark.js\` compiles from V8's code cache, docs/decisions.md). Each build keeps its code cache in the benchmark's own directory, written by an unmeasured first start. Every process is started with Node by the benchmark and polled the same way (a GET every 2 ms); the rounds take each measure in turn, both builds in the same round. Target: the node's first healthy \`/health\` ≤ ${serveTarget} ms: ${met ? "**met**" : "**not met**"} (medians ${serveMedians.map(ms).join(" and ")}).

${table}${busy}

What stands between the floor and 500 ms (\`perf\` and \`node --cpu-prof\` of the bundle serving an existing data dir, CPU times on this machine under load from other work, so about 1.5× an idle run): Node's own start (the floor's CPU time); reading the 7 MB bundle, checking its hash and compiling it from V8's code cache, about 45 ms (without the cache, on the first start of a build, about 150 ms more: V8 scans the whole file once); evaluating the modules \`clark\` runs at start, about 60-80 ms for the command line's and 150-190 ms for the node's (effect, @effect/cli, @effect/platform's HTTP server and HttpApi, @effect/sql, and every schema, handler and layer of the node: mostly building schemas, with the garbage collection that comes with it); and building the node's layers, 160 ms (SQLite opened and migrated, identity, stores, the turn engine's recovery, the HttpApi router with a decoder per endpoint) in many small fibers, each step cheap and none dominant. Garbage collection is about a quarter of the main thread's time and spread over all of it; V8's semi-space settings (\`--max-semi-space-size\`, \`--min-semi-space-size\`) did not lower the CPU time. The OpenAPI document is built by the first \`/openapi.json\`, tiles, media, the marketplace client, registry packages and service runtimes by their first use. The next steps would be fewer schemas built at start (per group, on first use), or a start-up snapshot.
`
    log(`Wrote ${writeDocs("startup", section)}`)
  } finally {
    removeBaseline(baselineDir)
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack ?? error.message : String(error))
  process.exitCode = 1
})
