/**
 * The demo registry: the example packages of examples/packages served as a small npm registry, so the demo
 * marketplace can index them (`clark market submit`) and a node can install them from it (CC_REGISTRY_URL),
 * by the same verified path as any registry package. Each folder is packed once at start the way `npm pack`
 * lays a tarball out (every file under `package/`); the packument's `dist.integrity` is the sha512 of exactly
 * the bytes served. Nothing is signed and nothing carries provenance: the marketplace and the node report both
 * as absent.
 *
 *   npm run demo:registry                       # http://127.0.0.1:8790
 *   DEMO_REGISTRY_PORT=9000 npm run demo:registry
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as tar from "tar"

export const examplesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../examples/packages")

export interface Served {
  readonly name: string
  readonly version: string
  readonly integrity: string
}

export interface DemoRegistry {
  readonly url: string
  readonly packages: ReadonlyArray<Served>
  readonly close: () => Promise<void>
}

/** Packs `folder` as npm does: entries under `package/`, no owners, gzipped. */
export const pack = async (folder: string): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  const stream = tar.c({ gzip: true, cwd: folder, prefix: "package/", portable: true }, fs.readdirSync(folder).sort())
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const json = (response: http.ServerResponse, status: number, body: unknown) => {
  const bytes = Buffer.from(JSON.stringify(body))
  response.writeHead(status, { "content-type": "application/json", "content-length": bytes.length }).end(bytes)
}

/** Serves every package folder under `dir` (default examples/packages) on `host`:`port` (0: any free port). */
export const startDemoRegistry = async (
  options: { readonly host?: string; readonly port?: number; readonly dir?: string } = {}
): Promise<DemoRegistry> => {
  const dir = options.dir ?? examplesDir
  const folders = fs.readdirSync(dir).sort().map((entry) => path.join(dir, entry))
    .filter((folder) => fs.existsSync(path.join(folder, "package.json")))
  const packed = await Promise.all(folders.map(async (folder) => {
    const manifest = JSON.parse(fs.readFileSync(path.join(folder, "package.json"), "utf8")) as { name: string; version: string }
    const tarball = await pack(folder)
    return {
      name: manifest.name,
      version: manifest.version,
      tarball,
      integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
      shasum: createHash("sha1").update(tarball).digest("hex"),
      file: `/${manifest.name}/-/${manifest.name.split("/").pop()}-${manifest.version}.tgz`
    }
  }))
  const published = new Date(fs.statSync(dir).mtimeMs).toISOString()
  let url = ""
  const server = http.createServer((request, response) => {
    const raw = (request.url ?? "/").split("?")[0]!
    if (request.method !== "GET" && request.method !== "HEAD") return json(response, 405, { error: "Method not allowed" })
    const tarball = packed.find((p) => p.file === raw)
    if (tarball !== undefined) {
      return void response.writeHead(200, { "content-type": "application/octet-stream", "content-length": tarball.tarball.length })
        .end(tarball.tarball)
    }
    // A packument: `/@scope%2fname` (either case of the escape) or `/name`.
    let name: string
    try {
      name = decodeURIComponent(raw.slice(1))
    } catch {
      return json(response, 404, { error: "Not found" })
    }
    const pkg = packed.find((p) => p.name === name)
    if (pkg === undefined) return json(response, 404, { error: "Not found" })
    return json(response, 200, {
      name: pkg.name,
      "dist-tags": { latest: pkg.version },
      versions: {
        [pkg.version]: {
          name: pkg.name,
          version: pkg.version,
          dist: { tarball: `${url}${pkg.file}`, integrity: pkg.integrity, shasum: pkg.shasum }
        }
      },
      time: { created: published, modified: published, [pkg.version]: published }
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve())
  })
  const address = server.address() as AddressInfo
  url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`
  return {
    url,
    packages: packed.map(({ integrity, name, version }) => ({ name, version, integrity })),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())))
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.DEMO_REGISTRY_PORT ?? 8790)
  startDemoRegistry({ port }).then((registry) => {
    process.stdout.write(`Demo registry at ${registry.url}\n`)
    for (const pkg of registry.packages) process.stdout.write(`  ${pkg.name}@${pkg.version}  ${pkg.integrity}\n`)
  }, (error: unknown) => {
    process.stderr.write(`demo registry: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  })
}
