/** Pieces every benchmark script shares: paths, building, ports, percentiles and the report file. */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../../", import.meta.url))

export const log = (line: string) => console.log(line)

/** A positive integer from the environment, or `fallback` when unset. */
/** A whole-number setting of at least `min`, or `fallback` when unset. */
const intAtLeast = (min: number, what: string) => (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be ${what}, got ${JSON.stringify(raw)}`)
  return value
}

export const positiveInt = intAtLeast(1, "a positive integer")
export const nonNegativeInt = intAtLeast(0, "a whole number, 0 or more")

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** CPU time of the whole machine, all cores, in ms. */
export const machineBusyMs = () =>
  os.cpus().reduce((sum, cpu) => sum + cpu.times.user + cpu.times.nice + cpu.times.sys + cpu.times.irq, 0)

/**
 * Cores the machine keeps busy over `ms` while the benchmark's own processes wait: other work that would
 * take CPU from the runs. (A load average cannot tell: it still counts the benchmark's previous runs.)
 */
export const otherWorkCores = async (ms = 2000) => {
  const before = machineBusyMs()
  const started = performance.now()
  await new Promise((resolve) => setTimeout(resolve, ms))
  return (machineBusyMs() - before) / (performance.now() - started)
}

/** More than this many cores of other work marks a benchmark's figures as understated. */
export const otherWorkLimit = 0.25

/** Nearest-rank percentile of sorted values. */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

/** Compiles the sources: the benchmarks measure the compiled program production runs. */
export const build = (what: string) => {
  log("Building (npm run build: tsc, then the bundle bin/clark.js runs)")
  const started = Date.now()
  const result = spawnSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" })
  if (result.status !== 0) {
    throw new Error(`the build failed (exit ${result.status ?? result.signal}); the ${what} would not be what the sources say`)
  }
  log(`  built in ${seconds(Date.now() - started)}`)
}

/** Replaces the script's own section of docs/benchmarks.md, between its markers, and returns the file. */
export const writeDocs = (name: string, section: string) => {
  const markers = { start: `<!-- bench:${name}:start -->`, end: `<!-- bench:${name}:end -->` }
  const file = path.join(root, "docs", "benchmarks.md")
  const block = `${markers.start}\n${section.trimEnd()}\n${markers.end}`
  const existing = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined
  let next: string
  if (existing === undefined) {
    next = `# Benchmarks\n\nFigures written by the benchmark scripts (\`npm run bench:*\`); each script replaces its own section, between its markers, on every run. Figures depend on the machine: compare runs made on the same one.\n\n${block}\n`
  } else {
    const start = existing.indexOf(markers.start)
    const end = existing.indexOf(markers.end)
    next = start !== -1 && end > start
      ? existing.slice(0, start) + block + existing.slice(end + markers.end.length)
      : `${existing.trimEnd()}\n\n${block}\n`
  }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, next)
  return file
}
