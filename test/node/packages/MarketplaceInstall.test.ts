/**
 * A marketplace listing installed end to end: a real marketplace server lists the package, a local registry
 * stand-in serves its real tarball, and the node installs it through the approval the person grants. The
 * reach the listing showed is checked against the manifest in the tarball.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { startMarketplace } from "../../support/MarketplaceServer.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { query, typedClient, wire } from "../../support/NodeFixtures.js"
import * as Registry from "../../support/registry/Registry.js"
import { integrityOf, packFolder } from "../../support/registry/Tarballs.js"
import { examples, tideCatalogue, tideManifest, tideName } from "../../support/TideListing.js"

const name = tideName
const manifest = tideManifest


/** The registry serving the widget's tarball, a marketplace listing it, and a node using both. */
const setup = (permissions: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const registry = yield* Registry.start
    const tarball = yield* Effect.promise(() => packFolder(path.join(examples, "tide-widget")))
    registry.publish({ name, version: "1.0.0", tarball })
    const market = yield* Effect.acquireRelease(
      Effect.promise(() => startMarketplace("sqlite", tideCatalogue(integrityOf(tarball), permissions))),
      (running) => Effect.promise(() => running.close())
    )
    return { registry, market, integrity: integrityOf(tarball) }
  })

const withNode = (urls: { readonly marketplaceUrl: string; readonly registryUrl: string }) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer(urls))

describe("a marketplace package", () => {
  it.scoped("is listed with its integrity, asked about, and installed from the registry once granted", () =>
    Effect.gen(function*() {
      const { integrity, market, registry } = yield* setup(manifest.permissions)
      yield* withNode({ marketplaceUrl: market.baseUrl, registryUrl: registry.url })(Effect.gen(function*() {
        const node = yield* TestNode
        const client = yield* typedClient("person")
        const directory = yield* client.packages.directory({ urlParams: {} })
        expect(directory.marketplace).toEqual({ status: "ok", url: market.baseUrl })
        expect(directory.packages).toEqual([expect.objectContaining({
          packageId: name,
          source: "marketplace",
          version: "1.0.0",
          digest: integrity,
          contentDigest: null,
          installed: null
        })])

        const asked = yield* Effect.orDie(wire(client.packages.install({ payload: { packageId: name }, withResponse: true })))
        expect(asked).toMatchObject({ status: 202, body: { code: "APPROVAL_REQUIRED" } })
        const approval = yield* client.packages.approval({ path: { approvalId: asked.body.approvalId } })
        expect(approval).toMatchObject({ source: "marketplace", riskTier: "reaches-out", status: "waiting" })
        // The tarball was fetched and checked before the question: nothing is installed yet.
        expect(query(node.dataDir, "SELECT * FROM installed_packages")).toEqual([])

        const decided = yield* client.packages.decideApproval({
          path: { approvalId: approval.approvalId },
          payload: { decision: "granted", digest: approval.operationDigest }
        })
        expect(decided.installed).toMatchObject({ packageId: name, version: "1.0.0" })
        const listing = yield* client.packages.listing({ path: { packageId: name } })
        expect(listing.installed).toMatchObject({ version: "1.0.0", digest: integrity, current: true })
        const entry = path.join(node.dataDir, "packages", decided.installed!.digest.slice("sha256:".length))
        expect(fs.readFileSync(path.join(entry, "widget/index.html"), "utf8")).toContain("Tide table")
        // No staging folder is left behind.
        expect(fs.readdirSync(path.join(node.dataDir, "packages-staging"))).toEqual([])
      }))
    }))

  it.scoped("whose manifest reaches further than its listing showed is 409 DECLARED_REACH_MISMATCH, nothing recorded", () =>
    Effect.gen(function*() {
      const { market, registry } = yield* setup([])
      yield* withNode({ marketplaceUrl: market.baseUrl, registryUrl: registry.url })(Effect.gen(function*() {
        const node = yield* TestNode
        const client = yield* typedClient("person")
        const refused = yield* Effect.orDie(wire(client.packages.install({ payload: { packageId: name }, withResponse: true })))
        expect(refused).toEqual({
          status: 409,
          body: {
            code: "DECLARED_REACH_MISMATCH",
            message: expect.any(String),
            undeclared: [{ kind: "network", value: "tides.example.org", access: null }]
          }
        })
        expect(query(node.dataDir, "SELECT * FROM install_approvals")).toEqual([])
        expect(query(node.dataDir, "SELECT * FROM installed_packages")).toEqual([])
      }))
    }))

  it.scoped("whose registry tarball is not the one listed is 409 DIGEST_MISMATCH", () =>
    Effect.gen(function*() {
      const { market, registry } = yield* setup(manifest.permissions)
      // The registry now serves other bytes under the same version.
      const other = yield* Effect.promise(() => packFolder(path.join(examples, "harbour-theme")))
      registry.publish({ name, version: "1.0.0", tarball: other })
      yield* withNode({ marketplaceUrl: market.baseUrl, registryUrl: registry.url })(Effect.gen(function*() {
        const client = yield* typedClient("person")
        const refused = yield* Effect.orDie(wire(client.packages.install({ payload: { packageId: name }, withResponse: true })))
        expect(refused).toMatchObject({ status: 409, body: { code: "DIGEST_MISMATCH", actual: integrityOf(other) } })
      }))
    }))
})
