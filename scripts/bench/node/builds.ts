/**
 * The builds under test and their servers: the current checkout ("after", `npm run build` to its dist/) and the baseline
 * commit ("before", BENCH_BASELINE_REF) checked out in a temporary git worktree, built to that worktree's own dist/
 * and removed at the end; each started as `node bin/clark.js node serve --model scripted:<script>` from its own
 * checkout, so the benchmark drives both only through the HTTP API. Also the plain node:http reference.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { killAll } from "../Children.js"
import { freePort, log, root, seconds } from "../Common.js"
import { type Target, waitHealthy } from "./client.js"
import { startNodeChild } from "./probe.js"
import { script, settings } from "./settings.js"
import { preloadSource, referenceSource } from "./sources.js"

export type BuildKey = "before" | "after"

export interface Build {
  readonly key: BuildKey
  /** The short commit hash, with "+ changes" when the checkout's sources differ from it. */
  readonly commit: string
  readonly subject: string
  /** The checkout whose bin/clark.js and dist/ run. */
  readonly dir: string
}

/** `git ARGS` in `cwd`; its output, trimmed; throws with git's message when it fails. */
const git = (args: ReadonlyArray<string>, cwd: string = root): string => {
  const result = spawnSync("git", args, { cwd, encoding: "utf8" })
  if (result.error !== undefined) throw new Error(`git ${args.join(" ")}: ${result.error.message}`)
  if (result.status !== 0) throw new Error(`git ${args.join(" ")} exited with ${result.status}: ${result.stderr.trim()}`)
  return result.stdout.trim()
}

/** Compilers still running, killed on Ctrl-C. */
export const compilers = new Set<ChildProcess>()

/**
 * `command` in the checkout `dir`, which compiles it to its own dist/: the benchmark measures the compiled program
 * production runs. Asynchronous, so the two builds run at once.
 */
const compile = (what: string, dir: string, command: ReadonlyArray<string>) =>
  new Promise<void>((resolve, reject) => {
    log(`Building ${what} in ${dir} (${command.join(" ")})`)
    const started = Date.now()
    const child = spawn(command[0]!, command.slice(1), { cwd: dir, stdio: "inherit" })
    compilers.add(child)
    child.once("error", (error) => {
      compilers.delete(child)
      reject(new Error(`${command.join(" ")}: ${error.message}`))
    })
    child.once("exit", (code, signal) => {
      compilers.delete(child)
      if (code !== 0) {
        return reject(new Error(`${command.join(" ")} in ${dir} failed (exit ${code ?? signal}); the ${what} would not be what its sources say`))
      }
      log(`  ${what} built in ${seconds(Date.now() - started)}`)
      resolve()
    })
  })

/** The current checkout, built to its dist/ by its own build script ("after"; today `tsc -p tsconfig.json`). */
export const buildCurrent = async (): Promise<Build> => {
  await compile("the current checkout", root, ["npm", "run", "--silent", "build"])
  const dirty = git(["status", "--porcelain", "--untracked-files=no", "--", "schema", "services", "layers", "src", "bin"]) !== ""
  return {
    key: "after",
    commit: `${git(["rev-parse", "--short", "HEAD"])}${dirty ? " + changes" : ""}`,
    subject: git(["log", "-1", "--format=%s", "HEAD"]),
    dir: root
  }
}

/** The temporary worktree of the baseline while it exists: its directory and the one made to hold it. */
let worktree: { readonly dir: string; readonly parent: string } | undefined

/**
 * `ref` checked out in a temporary worktree (node_modules linked to this checkout's); `build` compiles it to its own
 * dist/: its own `npm run build` when it has the bundle script, else `npx tsc -p tsconfig.json` (the build of every
 * commit up to the re-founding).
 *
 * With `ownDependencies` (a baseline that runs in processes of its own, as bench:node's nodes do), a baseline whose
 * package-lock.json differs from this checkout's gets its own `npm ci` instead: linked to today's node_modules, a
 * commit that imports a package since dropped would not build. The in-process benches (tools, widgets, artifacts)
 * load the baseline into their own process and must share this checkout's dependencies, so they link always.
 */
export const checkoutBaseline = (
  ref: string,
  options: { readonly ownDependencies?: boolean } = {}
): Build & { readonly build: () => Promise<void> } => {
  let sha: string
  try {
    sha = git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])
  } catch {
    throw new Error(`BENCH_BASELINE_REF: ${JSON.stringify(ref)} names no commit of this repository (none skips the baseline)`)
  }
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-baseline-"))
  const dir = path.join(parent, `clark-baseline-${sha.slice(0, 12)}`)
  worktree = { dir, parent }
  log(`Baseline ${ref} (${sha.slice(0, 7)}): git worktree add --detach ${dir}`)
  git(["worktree", "add", "--detach", dir, sha])
  const lock = (where: string) => fs.readFileSync(path.join(where, "package-lock.json"), "utf8")
  if (options.ownDependencies === true && lock(dir) !== lock(root)) {
    log(`  its package-lock.json differs from this checkout's: npm ci in the worktree (a few minutes)`)
    const started = Date.now()
    const installed = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] })
    if (installed.status !== 0) throw new Error(`npm ci in the baseline's worktree failed (${installed.status ?? installed.signal})`)
    log(`  installed in ${seconds(Date.now() - started)}`)
  } else {
    fs.symlinkSync(fs.realpathSync(path.join(root, "node_modules")), path.join(dir, "node_modules"))
  }
  return {
    key: "before",
    commit: sha.slice(0, 7),
    subject: git(["log", "-1", "--format=%s", sha]),
    dir,
    // Its own build script when it bundles (bin/clark.js runs the bundle when there is one, tsc's output otherwise):
    // built with tsc alone, a bundling baseline would run unbundled, unlike what it ships.
    build: () =>
      compile(
        `the baseline ${ref}`,
        dir,
        fs.existsSync(path.join(dir, "scripts", "bundle.mjs")) ? ["npm", "run", "--silent", "build"] : ["npx", "tsc", "-p", "tsconfig.json"]
      )
  }
}

/** Removes the baseline's worktree, if there is one; synchronous, so it can run on Ctrl-C too. */
export const removeBaseline = () => {
  if (worktree === undefined) return
  const { dir, parent } = worktree
  worktree = undefined
  const removed = spawnSync("git", ["worktree", "remove", "--force", dir], { cwd: root, encoding: "utf8" })
  fs.rmSync(parent, { recursive: true, force: true })
  if (removed.status !== 0) {
    // The directory is gone: prune drops its administrative files (and only those of worktrees whose directory is gone).
    spawnSync("git", ["worktree", "prune"], { cwd: root })
    log(`  git worktree remove ${dir} failed (${removed.stderr.trim()}); removed the directory and pruned`)
  }
}

/**
 * Cleans up after a run that ends early: on any exit, a crash included, the baseline's worktree goes; on Ctrl-C or
 * a kill, the child processes, the compilers, the baseline's worktree and the temporary directories go too.
 */
export const cleanUpOnExit = (tmpDirs: ReadonlySet<string>) => {
  process.on("exit", removeBaseline)
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      killAll()
      for (const compiler of compilers) compiler.kill("SIGKILL")
      removeBaseline()
      for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true })
      process.exit(130)
    })
  }
}

/** The script and the preload, written once into the run's temporary directory for every node. */
export const writeNodeFiles = (tmp: string) => {
  const scriptFile = path.join(tmp, "script.json")
  const preloadFile = path.join(tmp, "preload.mjs")
  fs.writeFileSync(scriptFile, JSON.stringify(script, null, 2))
  fs.writeFileSync(preloadFile, preloadSource)
  return { scriptFile, preloadFile }
}

export const nodeLabel = (b: Build) => `node ${b.key}`

/** The node of build `b` on a fresh data dir under `tmp`, healthy, with its local token. */
export const startNode = async (b: Build, tmp: string, files: ReturnType<typeof writeNodeFiles>): Promise<Target> => {
  const dataDir = path.join(tmp, `data-${b.key}`)
  const port = await freePort()
  const label = nodeLabel(b)
  const child = startNodeChild(
    label,
    [
      ...settings.nodeFlags,
      "--expose-gc",
      "--import",
      pathToFileURL(files.preloadFile).href,
      "bin/clark.js",
      "node",
      "serve",
      "--data-dir",
      dataDir,
      "--port",
      String(port),
      "--model",
      `scripted:${files.scriptFile}`
    ],
    { CC_APP_SECRET: randomBytes(24).toString("base64url") },
    b.dir
  )
  const started = Date.now()
  await waitHealthy({ label, port, token: "", child })
  const token = String(JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken)
  log(`  ${label} (${b.commit}) healthy on port ${port} after ${seconds(Date.now() - started)} (pid ${child.process.pid})`)
  return { label, port, token, child }
}

export const referenceLabel = "plain node:http"

/**
 * The reference with the node's preload, so that its own delta → bytes (the floor of node:http on this machine,
 * same scan, same sampling every 100 ms) is read the same way as the node's.
 */
export const startReference = async (files: ReturnType<typeof writeNodeFiles>): Promise<Target> => {
  const port = await freePort()
  const child = startNodeChild(referenceLabel, [
    "--import",
    pathToFileURL(files.preloadFile).href,
    "-e",
    referenceSource,
    String(settings.deltas),
    String(settings.burstDeltas),
    String(settings.delayMs),
    String(port)
  ], {}, root)
  const target = { label: referenceLabel, port, token: "", child }
  await waitHealthy(target)
  return target
}

/** plain-shape.ts's modes and their labels. */
export const plainShapes = {
  turn: "the shape, done plainly",
  platform: "HttpApi + stream response alone"
} as const

/**
 * A bench server (scripts/bench/<entry>.ts) bundled as the node is (scripts/bundle.mjs): one file,
 * dist/bench/<name>.mjs, better-sqlite3 left outside; its path.
 */
export const bundleForBench = async (entry: string, name: string) => {
  const outfile = path.join(root, "dist", "bench", `${name}.mjs`)
  await esbuild.build({
    entryPoints: [path.join(root, "scripts", "bench", `${entry}.ts`)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["better-sqlite3"],
    // The bundle's CommonJS dependencies call `require`, which an ES module does not have.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    outfile,
    logLevel: "warning"
  })
  return outfile
}

export const buildPlainShape = () => bundleForBench("node/plain-shape", "plain-shape")

/** plain-shape.ts in `mode`, with the node's preload for its CPU, on a fresh database under `tmp`. */
export const startPlainShape = async (
  files: ReturnType<typeof writeNodeFiles>,
  tmp: string,
  bundle: string,
  mode: keyof typeof plainShapes
): Promise<Target> => {
  const label = plainShapes[mode]
  const port = await freePort()
  const dir = fs.mkdtempSync(path.join(tmp, `plain-shape-${mode}-`))
  const child = startNodeChild(label, [
    // `clark`'s V8 setting (bin/v8-tuning.js), so that the two differ in their code alone.
    "--no-allocation-site-pretenuring",
    "--import",
    pathToFileURL(files.preloadFile).href,
    bundle,
    mode,
    String(settings.deltas),
    String(settings.burstDeltas),
    String(settings.delayMs),
    String(port),
    dir
  ], {}, root)
  const target = { label, port, token: "", child }
  await waitHealthy(target)
  return target
}
