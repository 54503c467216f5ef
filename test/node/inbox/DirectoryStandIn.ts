/**
 * A stand-in marketplace on a loopback port for the directory's cache tests and bench:inbox: it answers the two
 * routes the node's catalog client calls (GET /api/v1/packages, always an empty page so the inbox's update check
 * asks for no details; GET /api/v1/packages/{name}, a package detail encoded by the marketplace's own Schema),
 * counts the detail requests per package, and can delay them or hold them until released (a directory that hangs).
 */
import { Schema } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { PackageDetail } from "../../../schema/marketplace/Package.js"

export interface Listed {
  readonly name: string
  readonly version: string
  readonly integrity: string
  readonly facets?: ReadonlyArray<unknown>
  readonly permissions?: ReadonlyArray<unknown>
}

export interface StandIn {
  readonly url: string
  /** Lists (or, with null, unlists) a package from now on. */
  readonly list: (listed: Listed | null, name?: string) => void
  /** Detail requests received per package name. */
  readonly requests: (name: string) => number
  readonly totalRequests: () => number
  /** Resolves once `count` detail requests have arrived in all. */
  readonly arrived: (count: number) => Promise<void>
  /** Holds every detail request from now on until `release` (a directory that hangs). */
  readonly hold: () => void
  readonly release: () => void
  /** Answers each detail request after this many ms of wall time (a slow directory, for the bench). */
  readonly delay: (ms: number) => void
  readonly close: () => Promise<void>
}

const at = "2026-11-01T00:00:00.000Z"

const detailOf = (listed: Listed) =>
  Schema.encodeSync(PackageDetail)(Schema.decodeUnknownSync(PackageDetail)({
    name: listed.name,
    displayName: listed.name,
    description: "A package the stand-in lists",
    latestVersion: listed.version,
    publisher: null,
    categorySlug: null,
    curationStatus: "listed",
    keywords: [],
    indexedAt: at,
    updatedAt: at,
    homepage: null,
    repositoryUrl: null,
    license: null,
    latest: {
      version: listed.version,
      publishedAt: at,
      indexedAt: at,
      registryIntegrity: listed.integrity,
      tarballSha512Verified: true,
      hasProvenance: false,
      readmeHtml: null,
      platforms: [],
      facets: listed.facets ?? [],
      permissions: listed.permissions ?? [],
      previews: [],
      securityChecks: []
    },
    versions: [{ version: listed.version, publishedAt: at }]
  }))

export const start = async (listed: ReadonlyArray<Listed>): Promise<StandIn> => {
  const packages = new Map(listed.map((l) => [l.name, l]))
  const counts = new Map<string, number>()
  let total = 0
  let waiters: Array<{ count: number; resolve: () => void }> = []
  let held: Array<() => void> | null = null
  let delayMs = 0

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" })
    res.end(JSON.stringify(body))
  }
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://stand-in")
    if (url.pathname === "/api/v1/packages") return json(res, 200, { items: [], nextCursor: null })
    const match = /^\/api\/v1\/packages\/([^/]+)$/.exec(url.pathname)
    if (match === null) return json(res, 404, { error: { code: "not_found", message: "no such route", requestId: "x" } })
    const name = decodeURIComponent(match[1]!)
    counts.set(name, (counts.get(name) ?? 0) + 1)
    total++
    waiters = waiters.filter((w) => (w.count <= total ? (w.resolve(), false) : true))
    const answer = () => {
      const pkg = packages.get(name)
      if (pkg === undefined) return json(res, 404, { error: { code: "not_found", message: "no such package", requestId: "x" } })
      json(res, 200, detailOf(pkg))
    }
    const respond = () => (delayMs > 0 ? setTimeout(answer, delayMs) : answer())
    if (held !== null) held.push(respond)
    else respond()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    list: (pkg, name) => {
      if (pkg === null) packages.delete(name ?? "")
      else packages.set(pkg.name, pkg)
    },
    requests: (name) => counts.get(name) ?? 0,
    totalRequests: () => total,
    arrived: (count) =>
      count <= total ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    hold: () => {
      held ??= []
    },
    release: () => {
      const waiting = held ?? []
      held = null
      for (const respond of waiting) respond()
    },
    delay: (ms) => {
      delayMs = ms
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const respond of held ?? []) respond()
        held = null
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
