/**
 * `npm run bench:packages`: the node's package install path against the plain tools doing the same work,
 * side by side in one run (issue 13, point 7).
 *
 * 1. Digest: a generated folder of 5,000 files and 64 MiB (the package limits) through
 *    `PackageFolders.scan` vs `find … -type f -print0 | xargs -0 sha256sum`. Target: within 1.5×.
 * 2. Install copy: `PackageFolders.copyToCache` of that folder (walk, read, hash, write read-only, rename)
 *    vs `cp -r`. Target: within 2×.
 * 3. Registry: verify + unpack of a 10 MiB tarball read from disk (the sha512 check and `unpackVerified`:
 *    gunzip, listing, extraction, the steps `RegistryPackages.unpack` runs once the bytes are in) vs
 *    `sha512sum` + `tar xzf` of the same file. Target: within 1.5×. For information, the whole
 *    `RegistryPackages.unpack` too, its packument and tarball GETs served by a stand-in on 127.0.0.1.
 *
 * Each measure runs a warm-up, then BENCH_PACKAGES_ROUNDS rounds (default 3) of ours and the tool in turn,
 * so drift in the machine's load hits both alike; the median of each is reported (file cache warm for all).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import { execFileSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as tar from "tar"
import * as FsPackageFolders from "../../layers/node/fs/FsPackageFolders.js"
import * as HttpRegistryPackages from "../../layers/registry/HttpRegistryPackages.js"
import { defaultLimits, integrityMatches, unpackVerified } from "../../layers/registry/Unpack.js"
import { packageLimits } from "../../services/node/ContentDigest.js"
import { TarballRefused } from "../../services/node/PackageErrors.js"
import { RegistryPackages } from "../../services/node/RegistryPackages.js"
import { log, otherWorkCores, otherWorkLimit, positiveInt, writeDocs } from "./Common.js"

const rounds = positiveInt("BENCH_PACKAGES_ROUNDS", 3)

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const time = async (run: () => Promise<unknown> | unknown) => {
  const started = performance.now()
  await run()
  return performance.now() - started
}

const sh = (script: string) => execFileSync("sh", ["-c", script], { stdio: ["ignore", "ignore", "inherit"] })

/** `files` files in folders of 100, `bytes` in all, random content (what hashing costs is per byte). */
const generate = (root: string, files: number, bytes: number, content: (size: number) => Buffer) => {
  const size = Math.floor(bytes / files)
  for (let i = 0; i < files; i++) {
    const folder = path.join(root, `dir-${String(Math.floor(i / 100)).padStart(2, "0")}`)
    if (i % 100 === 0) fs.mkdirSync(folder, { recursive: true })
    fs.writeFileSync(path.join(folder, `file-${i}.bin`), content(size))
  }
}

interface Row {
  readonly what: string
  readonly ours: string
  readonly tool: string
  /** Absent: shown for information, no target. */
  readonly target?: number
  readonly oursMs: ReadonlyArray<number>
  readonly toolMs: ReadonlyArray<number>
}

/** Warm-up, then rounds of ours and the tool in turn; `reset` runs untimed before each run. */
const compare = async (
  row: Omit<Row, "oursMs" | "toolMs">,
  ours: () => Promise<unknown>,
  tool: () => unknown,
  reset: () => void = () => {}
): Promise<Row> => {
  reset()
  await ours()
  reset()
  tool()
  const oursMs: Array<number> = []
  const toolMs: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    reset()
    oursMs.push(await time(ours))
    reset()
    toolMs.push(await time(tool))
  }
  const result = { ...row, oursMs, toolMs }
  log(`  ${row.what}: ours ${median(oursMs).toFixed(0)} ms, ${row.tool} ${median(toolMs).toFixed(0)} ms (${(median(oursMs) / median(toolMs)).toFixed(2)}×${row.target === undefined ? "" : `, target ${row.target}×`})`)
  return result
}

/** A registry stand-in answering one packument and one tarball. */
const serveRegistry = async (name: string, tarball: Buffer) => {
  const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`
  let base = ""
  const server = http.createServer((request, response) => {
    if (request.url === `/${name}`) {
      const packument = { name, "dist-tags": { latest: "1.0.0" }, versions: { "1.0.0": { name, version: "1.0.0", dist: { tarball: `${base}/${name}/-/${name}-1.0.0.tgz`, integrity } } } }
      return void response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument))
    }
    if (request.url === `/${name}/-/${name}-1.0.0.tgz`) return void response.writeHead(200, { "content-length": tarball.length }).end(tarball)
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { base, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) }
}

const report = (rows: ReadonlyArray<Row>, load: string, otherWork: number) => {
  const lines = rows.map((row) => {
    const ratio = median(row.oursMs) / median(row.toolMs)
    return `| ${row.what} | ${row.ours} ${median(row.oursMs).toFixed(0)} ms | ${row.tool} ${median(row.toolMs).toFixed(0)} ms | ${ratio.toFixed(2)}× | ${row.target === undefined ? "none (for information)" : `≤ ${row.target}× ${ratio <= row.target ? "met" : "**not met**"}`} |`
  })
  return `## Packages

\`npm run bench:packages\`, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "unknown"}).

- Folder: generated, ${packageLimits.files.toLocaleString("en-US")} files of random bytes in 50 folders, ${(packageLimits.bytes / 1024 / 1024).toFixed(0)} MiB less a few bytes (the package limits). Tarball: 1,000 files of random base64 text packed as npm packs (\`package/\` prefix, gzip), about 10 MiB, read from disk for the target's row; the last row adds the packument and tarball GETs from a node:http stand-in on 127.0.0.1 in the same process.
- Each measure: a warm-up of both, then ${rounds} rounds of ours and the tool in turn, median reported; the files are in the page cache for both. Copies and unpacks go to a fresh folder each run (removed untimed).
- Load while it ran: \`uptime\` ${load}; other work before the runs ${otherWork.toFixed(2)} cores of CPU${otherWork > otherWorkLimit ? " (**more than a quarter of a core: the figures are understated**)" : ""}. A load average far above the CPU in use is other processes waiting on the disk: then the copies and unpacks (writes) are slow for ours and the tools alike.

| measure | ours (median) | tool (median) | ratio | target |
| --- | --- | --- | --- | --- |
${lines.join("\n")}
`
}

const main = async () => {
  const otherWork = await otherWorkCores()
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-packages-"))
  try {
    log("Generating the folder (5,000 files, 64 MiB) and the tarball (about 10 MiB)")
    const generating = performance.now()
    const folder = path.join(tmp, "folder")
    generate(folder, packageLimits.files, packageLimits.bytes - 4096, (size) => randomBytes(size))
    const packageFolder = path.join(tmp, "package")
    generate(packageFolder, 1_000, 13 * 1024 * 1024, (size) => Buffer.from(randomBytes(Math.ceil(size * 0.75)).toString("base64").slice(0, size)))
    fs.writeFileSync(path.join(packageFolder, "package.json"), JSON.stringify({ name: "bench-package", version: "1.0.0" }))
    const tarballFile = path.join(tmp, "bench-package-1.0.0.tgz")
    await tar.c({ gzip: true, cwd: packageFolder, prefix: "package/", portable: true, file: tarballFile }, fs.readdirSync(packageFolder).sort())
    const tarball = fs.readFileSync(tarballFile)
    log(`  tarball ${(tarball.length / 1024 / 1024).toFixed(1)} MiB, generated in ${((performance.now() - generating) / 1000).toFixed(1)} s`)

    const cacheDir = path.join(tmp, "cache")
    const folders = FsPackageFolders.make({ cacheDir })
    const rows: Array<Row> = []
    const { digest } = await Effect.runPromise(folders.scan(folder))
    rows.push(await compare(
      { what: "digest of 5,000 files / 64 MiB", ours: "`PackageFolders.scan`", tool: "`find -print0 \\| xargs -0 sha256sum`", target: 1.5 },
      () => Effect.runPromise(folders.scan(folder)),
      () => sh(`cd '${folder}' && find . -type f -print0 | xargs -0 sha256sum > /dev/null`)
    ))
    const copyTarget = path.join(tmp, "cp-copy")
    rows.push(await compare(
      { what: "install copy of that folder", ours: "`PackageFolders.copyToCache`", tool: "`cp -r`", target: 2 },
      () => Effect.runPromise(folders.copyToCache(folder, digest)),
      () => sh(`cp -r '${folder}' '${copyTarget}'`),
      () => (fs.rmSync(cacheDir, { recursive: true, force: true }), fs.rmSync(copyTarget, { recursive: true, force: true }), fs.mkdirSync(cacheDir))
    ))
    const registry = await serveRegistry("bench-package", tarball)
    const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`
    const refuse = (reason: TarballRefused["reason"]) => new TarballRefused({ name: "bench-package", version: "1.0.0", reason })
    try {
      // The service lives as in the node: built once, its HTTP client kept open across installs.
      const runtime = ManagedRuntime.make(
        Layer.effect(RegistryPackages, HttpRegistryPackages.make({ registryUrl: Option.some(new URL(registry.base)) })).pipe(
          Layer.provide(NodeHttpClient.layerUndici)
        )
      )
      const service = await runtime.runPromise(RegistryPackages)
      const into = path.join(tmp, "unpacked")
      const untarred = path.join(tmp, "untarred")
      const untar = () => sh(`sha512sum '${tarballFile}' > /dev/null && mkdir '${untarred}' && tar xzf '${tarballFile}' -C '${untarred}'`)
      const clean = () => (fs.rmSync(into, { recursive: true, force: true }), fs.rmSync(untarred, { recursive: true, force: true }))
      const size = `${(tarball.length / 1024 / 1024).toFixed(1)} MiB`
      // The steps `unpack` runs once the bytes are in: what the tools do on a file, so the target's row.
      rows.push(await compare(
        { what: `verify + unpack of a ${size} registry tarball`, ours: "sha512 check + `unpackVerified`", tool: "`sha512sum` + `tar xzf`", target: 1.5 },
        () =>
          Effect.runPromise(Effect.gen(function*() {
            const bytes = yield* Effect.promise(() => fs.promises.readFile(tarballFile))
            if (!integrityMatches(integrity, createHash("sha512").update(bytes).digest())) throw new Error("integrity")
            yield* unpackVerified(bytes, into, defaultLimits, refuse)
          })),
        untar,
        clean
      ))
      rows.push(await compare(
        { what: `the same through the registry stand-in (packument and tarball GETs)`, ours: "`RegistryPackages.unpack`", tool: "`sha512sum` + `tar xzf`" },
        () => Effect.runPromise(service.unpack({ name: "bench-package", into })),
        untar,
        clean
      ))
      await runtime.dispose()
    } finally {
      await registry.close()
    }
    const load = execFileSync("uptime").toString().trim().replace(/^.*load average:\s*/, "load average ")
    const file = writeDocs("packages", report(rows, load, otherWork))
    log(`Written to ${path.relative(process.cwd(), file)}`)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

await main()
