#!/usr/bin/env node
/**
 * `clark`. `clark --version` is answered here, before anything is loaded. Every other command runs the
 * bundle that `npm run build` writes (dist/clark/main.cjs, scripts/bundle.mjs), compiled from V8's code cache
 * (below); when tsc's output is newer than the bundle (only tsc was run since), that output runs instead, so
 * the program is never older than its build.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import { tuneV8 } from "./v8-tuning.js"

const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
  process.stdout.write(`${pkg.version}\n`)
} else {
  tuneV8()
  const bundle = new URL("../dist/clark/main.cjs", import.meta.url)
  const compiled = new URL("../dist/src/cli/main.js", import.meta.url)
  const mtime = (url) => fs.statSync(url, { throwIfNoEntry: false })?.mtimeMs ?? -1
  if (mtime(bundle) >= mtime(compiled)) runBundle(bundle)
  else await import(compiled.href)
}

/**
 * Runs the bundle as a CommonJS module compiled with V8's code cache. Compiling it was a third of `clark node
 * serve`'s start-up, and Node 20 keeps no compile cache of its own (docs/decisions.md, "Start-up: V8's code
 * cache"). The cache holds the functions a run compiled, so it is kept per command (its first two words):
 * `clark node serve` starts from what the last `clark node serve` compiled. It is keyed by the bundle's
 * content, Node's version and flags, and checked before use; one that is missing, damaged or refused by V8
 * costs only a normal compile, after which this run writes a new one. CLARK_CODE_CACHE names the directory
 * (default: $XDG_CACHE_HOME/clark/code-cache, else ~/.cache/clark/code-cache); `off` keeps none.
 */
function runBundle(url) {
  const require = createRequire(import.meta.url)
  const { isAscii } = require("node:buffer")
  const crypto = require("node:crypto")
  const os = require("node:os")
  const path = require("node:path")
  const { setTimeout } = require("node:timers")
  const { fileURLToPath } = require("node:url")
  const vm = require("node:vm")
  const zlib = require("node:zlib")

  const file = fileURLToPath(url)
  const bytes = fs.readFileSync(file)
  // esbuild writes it in ASCII (charset), which latin1 reads straight into V8's one-byte strings.
  const source = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8")
  const setting = process.env.CLARK_CODE_CACHE
  const dir = setting === "off"
    ? undefined
    : setting || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "clark", "code-cache")
  // The words before the first option (`node serve`), not an option's value (`market --url http://…`).
  const options = args.findIndex((arg) => arg.startsWith("-"))
  const command = args.slice(0, Math.min(2, options === -1 ? args.length : options))
  const key = crypto.createHash("sha256")
    .update(bytes)
    .update(JSON.stringify([process.version, process.arch, process.execArgv, process.env.NODE_OPTIONS ?? "", command]))
    .digest("hex")
  const cacheFile = dir === undefined ? undefined : path.join(dir, `${key.slice(0, 40)}.bin`)

  // A cache file: MAGIC, the CRC-32 of the data, the data. V8 checks its version, flags and the source's length,
  // but not the data itself: a damaged file is caught here and read as missing.
  const magic = "clarkcc1"
  const checksum = (data) => zlib.crc32(data)
  const read = () => {
    try {
      const data = fs.readFileSync(cacheFile)
      const payload = data.subarray(12)
      return data.length > 12 && data.toString("latin1", 0, 8) === magic && data.readUInt32LE(8) === checksum(payload)
        ? payload
        : undefined
    } catch {
      return undefined
    }
  }
  const write = (data) => {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const header = Buffer.alloc(12)
    header.write(magic, 0, "latin1")
    header.writeUInt32LE(checksum(data), 8)
    // Written whole, then renamed: another `clark` never reads half a file.
    const temporary = `${cacheFile}.${process.pid}.tmp`
    fs.writeFileSync(temporary, Buffer.concat([header, data]), { mode: 0o600 })
    fs.renameSync(temporary, cacheFile)
    // The 16 newest are kept (builds times commands); older ones, and files of writers that died, are removed.
    const files = fs.readdirSync(dir).map((name) => ({ name, time: fs.statSync(path.join(dir, name)).mtimeMs }))
    const caches = files.filter((f) => f.name.endsWith(".bin")).sort((a, b) => b.time - a.time)
    const abandoned = files.filter((f) => f.name.endsWith(".tmp") && Date.now() - f.time > 60 * 60 * 1000)
    for (const f of [...caches.slice(16), ...abandoned]) fs.rmSync(path.join(dir, f.name), { force: true })
  }

  const cachedData = cacheFile === undefined ? undefined : read()
  // The file is the function CommonJS would wrap it in (scripts/bundle.mjs), written `0,function`: V8 compiles a
  // parenthesized function, here all of the bundle, eagerly.
  const script = new vm.Script(source, { filename: file, cachedData })
  const module = { exports: {}, filename: file, id: file }
  script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file))

  if (cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected)) {
    // Written once the command has run a while (a node has started by then) or when it ends well, whichever is
    // first, so it holds what the start compiled; a command that failed early (bad arguments, a taken port) would
    // leave a cache of less, kept until the next build. One that cannot be written is only a slower next start.
    let saved = false
    const save = () => {
      if (saved) return
      saved = true
      try {
        write(script.createCachedData())
      } catch {
        // no cache this time
      }
    }
    setTimeout(save, 1500).unref()
    process.once("exit", (code) => code === 0 && save())
  }
}
