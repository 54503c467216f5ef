/**
 * Bundles the compiled CLI (`dist/src/cli/main.js`, written by tsc) into `dist/clark/`, which `bin/clark.js`
 * runs. Run by `npm run build` after tsc.
 *
 * Why: Node spent most of `clark`'s start-up resolving, reading and compiling the hundreds of small modules
 * that `effect`, `@effect/platform` and `@effect/cli` re-export from their index modules (about 2 s on this
 * machine before any command ran). One module graph flattened by esbuild, with the unused exports of those
 * side-effect-free packages left out, loads in a fraction of that. Code splitting keeps each command's
 * `import()` (Lazy.ts) and each model provider's its own chunk, loaded only when it runs.
 *
 * For profiling: BUNDLE_MINIFY=0 keeps the code readable, BUNDLE_METAFILE=FILE writes esbuild's metafile.
 */
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
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
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // Native addons stay packages; tiktoken (Anthropic's tokenizer) finds its wasm file beside its own module.
  external: ["better-sqlite3", "pg-native", "@anthropic-ai/tokenizer", "tiktoken"],
  // CommonJS dependencies bundled into ES modules still call `require` for Node's built-in modules.
  banner: { js: "import { createRequire as __clarkCreateRequire } from \"node:module\"; const require = __clarkCreateRequire(import.meta.url);" },
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
 * Chunks are named by their content and a running `clark` imports some only when it needs them (a command,
 * a model provider, the node's tiles and media): the chunks of earlier builds stay a day, so a node started
 * before a rebuild can still load them. Older ones are removed.
 */
const written = new Set(Object.keys(result.metafile.outputs).map((file) => path.resolve(root, file)))
for (const name of fs.readdirSync(outdir)) {
  const file = path.join(outdir, name)
  if (!written.has(file) && Date.now() - fs.statSync(file).mtimeMs > 24 * 60 * 60 * 1000) fs.rmSync(file)
}
// BUNDLE_METAFILE=FILE writes what went into each chunk, for esbuild's analyser.
if (process.env.BUNDLE_METAFILE !== undefined) fs.writeFileSync(process.env.BUNDLE_METAFILE, JSON.stringify(result.metafile))
