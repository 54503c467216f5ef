#!/usr/bin/env node
/**
 * `clark`. `clark --version` is answered here, before anything is loaded. Every other command runs the
 * bundle that `npm run build` writes (dist/clark, scripts/bundle.mjs); when tsc's output is newer than the
 * bundle (only tsc was run since), that output runs instead, so the program is never older than its build.
 */
import * as fs from "node:fs"

const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
  process.stdout.write(`${pkg.version}\n`)
} else {
  const bundle = new URL("../dist/clark/main.js", import.meta.url)
  const compiled = new URL("../dist/src/cli/main.js", import.meta.url)
  const mtime = (url) => fs.statSync(url, { throwIfNoEntry: false })?.mtimeMs ?? -1
  await import(mtime(bundle) >= mtime(compiled) ? bundle.href : compiled.href)
}
