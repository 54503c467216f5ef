/**
 * Vitest's global setup: the CLI tests run the compiled `clark` (test/support/Cli.ts), so before any test
 * runs, `npm run build` (tsc, then the bundle) is run when a source is newer than the bundle. `npm ci`
 * builds it too (`prepare`), so from a clean clone `npm test` finds it fresh and builds nothing.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { root } from "./Cli.js"

const bundle = path.join(root, "dist/clark/main.cjs")
const sources = ["schema", "services", "layers", "src"]
const buildFiles = ["package.json", "tsconfig.json", "scripts/bundle.mjs", "bin/clark.js"]

/** The newest modification time under `dir`, in ms. */
const newest = (dir: string): number =>
  fs.readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
    const file = path.join(dir, entry.name)
    return Math.max(latest, entry.isDirectory() ? newest(file) : fs.statSync(file).mtimeMs)
  }, 0)

export const isStale = () => {
  const built = fs.statSync(bundle, { throwIfNoEntry: false })?.mtimeMs
  if (built === undefined) return true
  const sourceTime = Math.max(
    ...sources.map((dir) => newest(path.join(root, dir))),
    ...buildFiles.map((file) => fs.statSync(path.join(root, file)).mtimeMs)
  )
  return sourceTime > built
}

export default function setup() {
  if (!isStale()) return
  const started = Date.now()
  process.stdout.write("Building the CLI the tests run (npm run build): a source is newer than dist/clark\n")
  const result = spawnSync("npm", ["run", "build"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] })
  if (result.status !== 0) throw new Error(`npm run build failed (${result.status ?? result.signal}); the CLI tests need it`)
  process.stdout.write(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
}
