/**
 * Bundles the compiled CLI (`dist/src/cli/main.js`, written by tsc) into one CommonJS file,
 * `dist/clark/main.cjs`, which `bin/clark.js` compiles with V8's code cache. Run by `npm run build` after tsc.
 *
 * Why one module graph: Node spent most of `clark`'s start-up resolving, reading and compiling the hundreds of
 * small modules that `effect`, `@effect/platform` and `@effect/cli` re-export from their index modules (about
 * 2 s on this machine before any command ran). One graph flattened by esbuild, with the unused exports of those
 * side-effect-free packages left out, loads in a fraction of that.
 *
 * Why one CommonJS file rather than ES module chunks: Node 20 keeps no compile cache for ES modules, and
 * compiling the 1.8 MiB that `clark node serve` loaded was a third of its start-up. A classic script can be
 * compiled from V8's code cache (`vm.Script` `cachedData`), which `bin/clark.js` keeps per command. What a
 * command runs is still imported when it runs (Lazy.ts, OnFirstUse.ts): esbuild turns each `import()` into a
 * module evaluated on first use, so nothing a command does not use is run; its code is only scanned, once, on
 * the run that writes the cache.
 *
 * For profiling: BUNDLE_MINIFY=0 keeps the code readable, BUNDLE_METAFILE=FILE writes esbuild's metafile.
 */
import * as esbuild from "esbuild"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clearTimeout, setTimeout } from "node:timers"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../", import.meta.url))
const outdir = `${root}dist/clark`

/** Packages whose index re-exports each of their modules as a namespace (`export * as Schema from "./Schema.js"`). */
const barrels = [
  "effect",
  "@effect/cli",
  "@effect/experimental",
  "@effect/platform",
  "@effect/platform-node",
  "@effect/sql",
  "@effect/sql-pg",
  "@effect/sql-sqlite-node"
]

/**
 * `import { Effect, pipe } from "effect"` in our compiled modules becomes `import * as Effect from
 * "effect/Effect"` and `import { pipe } from "effect/Function"`. Through the index, esbuild keeps each
 * namespace object whole, with everything its module exports and imports (all of `Schema`, `fast-check`
 * through `Arbitrary`, `undici` through `NodeHttpServer.layerTest`); from the module itself it keeps only
 * what is used.
 */
const barrelImports = {
  name: "barrel-imports",
  setup(build) {
    const named = new Map()
    for (const pkg of barrels) {
      const index = fs.readFileSync(`${root}node_modules/${pkg}/dist/esm/index.js`, "utf8")
      const names = new Map()
      for (const [, name, module] of index.matchAll(/^export \* as (\w+) from "\.\/([\w/]+)\.js"/gm)) {
        names.set(name, { namespace: true, from: `${pkg}/${module}` })
      }
      for (const [, list, module] of index.matchAll(/^export \{([^}]*)\} from "\.\/([\w/]+)\.js"/gm)) {
        for (const name of list.replace(/\/\*[\s\S]*?\*\//g, "").split(",").map((n) => n.trim()).filter(Boolean)) {
          names.set(name, { namespace: false, from: `${pkg}/${module}` })
        }
      }
      named.set(pkg, names)
    }
    const pattern = new RegExp(`^import \\{([^}]*)\\} from "(${barrels.map((b) => b.replace("/", "\\/")).join("|")})";$`, "gm")
    build.onLoad({ filter: /[\\/]dist[\\/](src|layers|schema|services)[\\/].*\.js$/ }, (args) => {
      const source = fs.readFileSync(args.path, "utf8")
      const contents = source.replace(pattern, (statement, list, pkg) =>
        list.split(",").map((s) => s.trim()).filter(Boolean).map((specifier) => {
          const [imported, local = imported] = specifier.split(/\s+as\s+/)
          const target = named.get(pkg).get(imported)
          if (target === undefined) throw new Error(`${args.path}: ${imported} is not an export of ${pkg}'s index`)
          return target.namespace
            ? `import * as ${local} from "${target.from}";`
            : `import { ${imported} as ${local} } from "${target.from}";`
        }).join("\n"))
      return { contents, loader: "js", resolveDir: path.dirname(args.path) }
    })
  }
}

/**
 * The Node HTTP server module imports the Node HTTP client only for its `layerTest`, and that client
 * evaluates `undici` (about 700 KiB) as it loads. The server gets a stand-in; the model providers, which do
 * use the client, still import the real one in their own chunks.
 */
const serverWithoutClient = {
  name: "server-without-client",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/NodeHttpClient\.js$/ }, (args) =>
      /@effect[\\/]platform-node[\\/]dist[\\/]esm[\\/]internal[\\/]httpServer\.js$/.test(args.importer)
        ? { path: "NodeHttpClient", namespace: "server-without-client" }
        : undefined)
    build.onLoad({ filter: /.*/, namespace: "server-without-client" }, () => ({
      contents: `import * as Layer from "effect/Layer"
export const layerWithoutAgent = Layer.die(new Error("NodeHttpServer.layerTest is not part of the clark bundle"))
export const makeAgentLayer = () => layerWithoutAgent`,
      loader: "js",
      resolveDir: root
    }))
  }
}

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { main: "dist/src/cli/main.js" },
  outdir,
  outExtension: { ".js": ".cjs" },
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  // Native addons stay packages; tiktoken (Anthropic's tokenizer) finds its wasm file beside its own module.
  external: ["better-sqlite3", "pg-native", "@anthropic-ai/tokenizer", "tiktoken"],
  // The file is one expression, the function CommonJS would wrap it in, which bin/clark.js compiles as a script:
  // no copy of its 7 MB to wrap it at run time. Its modules are ES modules, strict as they were written: the
  // function starts with "use strict" (esbuild's own comes after the banner). `import.meta.url` (WalCheckpoints.ts
  // finds better-sqlite3 with it) is the bundle's URL.
  banner: {
    js: "0,function (exports, require, module, __filename, __dirname) {\"use strict\";" +
      "const __clarkImportMetaUrl=require(\"node:url\").pathToFileURL(__filename).href;"
  },
  footer: { js: "}" },
  define: { "import.meta.url": "__clarkImportMetaUrl" },
  // ASCII only, so bin/clark.js can read the file as latin1, the cheapest string V8 makes.
  charset: "ascii",
  minifyWhitespace: process.env.BUNDLE_MINIFY !== "0",
  minifySyntax: process.env.BUNDLE_MINIFY !== "0",
  keepNames: false,
  sourcemap: "linked",
  legalComments: "none",
  plugins: [barrelImports, serverWithoutClient],
  logLevel: "warning",
  metafile: true
})
/**
 * The files of earlier builds are removed after a day: a `clark` started from an older build of the ES module
 * chunks this script wrote before may still import one of them.
 */
const written = new Set(Object.keys(result.metafile.outputs).map((file) => path.resolve(root, file)))
for (const name of fs.readdirSync(outdir)) {
  const file = path.join(outdir, name)
  if (!written.has(file) && Date.now() - fs.statSync(file).mtimeMs > 24 * 60 * 60 * 1000) fs.rmSync(file)
}
// BUNDLE_METAFILE=FILE writes what went into the bundle, for esbuild's analyser.
if (process.env.BUNDLE_METAFILE !== undefined) fs.writeFileSync(process.env.BUNDLE_METAFILE, JSON.stringify(result.metafile))

/**
 * The first start of a build compiles without V8's code cache (bin/clark.js), about 150 ms of CPU more than
 * one with it. `clark node serve` is started once here, on a temporary data dir and port, and stopped once it
 * listens, so its cache is written for this build on this machine (`npm ci` builds on the machine that runs
 * it): the host app's first start of the node finds it. Nothing here fails the build; CLARK_CODE_CACHE=off
 * (or BUNDLE_WARM=0) skips it.
 */
const warmServe = () =>
  new Promise((resolve) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-warm-"))
    const child = spawn(process.execPath, [`${root}bin/clark.js`, "node", "serve", "--data-dir", dataDir, "--port", "0"], {
      env: { ...process.env, CC_APP_SECRET: "code-cache-warm-up", CC_HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "ignore"]
    })
    let output = ""
    const stop = () => child.kill("SIGTERM")
    child.stdout.on("data", (chunk) => {
      output += String(chunk)
      if (/Listening on /.test(output)) stop()
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    const done = () => {
      clearTimeout(timer)
      fs.rmSync(dataDir, { recursive: true, force: true })
      resolve()
    }
    child.once("exit", done)
    child.once("error", done)
  })
if (process.env.CLARK_CODE_CACHE !== "off" && process.env.BUNDLE_WARM !== "0") await warmServe()
