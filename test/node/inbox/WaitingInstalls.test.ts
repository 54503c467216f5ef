/**
 * A waiting install approval is listed in GET /inbox only while the directory still publishes that exact package,
 * version and digest (spec, "Install a package" rule 6): a local folder whose files or version change, and a real
 * marketplace whose listing moves to other bytes, hide it; put back, it is listed again. The approval itself stays
 * waiting all along (the question is the person's until it expires or is decided). The inbox checks against an
 * answer of the directory at most the TTL old (services/node/ListingCache.ts), so each change is read after it.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startMarketplace } from "../../support/MarketplaceServer.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { query, typedClient, wire } from "../../support/NodeFixtures.js"
import * as Registry from "../../support/registry/Registry.js"
import { integrityOf, packFolder } from "../../support/registry/Tarballs.js"
import { examples, tideCatalogue, tideName } from "../../support/TideListing.js"
import { defaultFreshness } from "../../../services/node/ListingCache.js"
import { inbox } from "./Support.js"

const name = tideName

const waitingInstalls = Effect.map(inbox(), (page) => page.waiting.filter((w) => w.kind === "install-approval"))

/** GET /inbox once the directory's last answer is too old to be used: the listing as the directory has it now. */
const waitingAfterTtl = Effect.zipRight(TestClock.adjust(defaultFreshness.ttl), waitingInstalls)

const approvalStatus = (dataDir: string) => query(dataDir, "SELECT status FROM install_approvals").map((r) => r.status)

describe("waiting install approvals in the inbox", () => {
  it.scoped("a local folder's approval is listed only while the folder holds the same version and bytes", () =>
    Effect.provide(
      Effect.gen(function*() {
        const node = yield* TestNode
        const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clark-waiting-")), "tide-widget")
        fs.cpSync(path.join(examples, "tide-widget"), folder, { recursive: true })
        const client = yield* typedClient("person")
        const listing = yield* Effect.orDie(client.packages.addLocal({ payload: { path: folder } }))
        const asked = yield* Effect.orDie(wire(client.packages.install({
          payload: { packageId: name, localDigest: listing.contentDigest! },
          withResponse: true
        })))
        expect(asked).toMatchObject({ status: 202, body: { code: "APPROVAL_REQUIRED" } })
        const approvalId = asked.body.approvalId as string
        expect(yield* waitingInstalls).toMatchObject([{ approvalId, package: name, version: "1.0.0", riskTier: "reaches-out" }])

        // Other bytes: not listed; the same bytes again: listed.
        const page = path.join(folder, "widget/index.html")
        const original = fs.readFileSync(page)
        fs.writeFileSync(page, "<p>swapped</p>")
        expect(yield* waitingAfterTtl).toEqual([])
        expect(approvalStatus(node.dataDir)).toEqual(["waiting"])
        fs.writeFileSync(page, original)
        expect((yield* waitingAfterTtl).map((w) => w.kind === "install-approval" && w.approvalId)).toEqual([approvalId])

        // Another version in the folder: not listed.
        const json = path.join(folder, "package.json")
        const text = fs.readFileSync(json, "utf8")
        fs.writeFileSync(json, text.replace(/"version": "1\.0\.0"/, "\"version\": \"1.0.1\""))
        expect(yield* waitingAfterTtl).toEqual([])
        // A folder that cannot be read as a package any more: not listed either.
        fs.writeFileSync(json, "{ not json")
        expect(yield* waitingAfterTtl).toEqual([])
        fs.writeFileSync(json, text)
        expect(yield* waitingAfterTtl).toHaveLength(1)
        expect(approvalStatus(node.dataDir)).toEqual(["waiting"])
      }),
      NodeServer.layer({})
    ))

  it.scoped("a marketplace package's approval is listed only while the marketplace lists those bytes", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const tarball = yield* Effect.promise(() => packFolder(path.join(examples, "tide-widget")))
      registry.publish({ name, version: "1.0.0", tarball })
      const integrity = integrityOf(tarball)
      const market = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startMarketplace("sqlite", tideCatalogue(integrity), { settings: { readCache: false } })
        ),
        (running) => Effect.promise(() => running.close())
      )
      // The listing's bytes move on (the same version, another integrity), and back.
      const relist = (integrity: string) =>
        Effect.promise(() =>
          market.query(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`UPDATE package_versions SET registry_integrity = ${integrity}`)))
        )
      yield* Effect.provide(
        Effect.gen(function*() {
          const node = yield* TestNode
          const client = yield* typedClient("person")
          const asked = yield* Effect.orDie(wire(client.packages.install({ payload: { packageId: name }, withResponse: true })))
          expect(asked).toMatchObject({ status: 202, body: { code: "APPROVAL_REQUIRED" } })
          expect(yield* waitingInstalls).toMatchObject([{ approvalId: asked.body.approvalId, package: name }])
          yield* relist("sha512-" + Buffer.alloc(64, 1).toString("base64"))
          expect(yield* waitingAfterTtl).toEqual([])
          expect(approvalStatus(node.dataDir)).toEqual(["waiting"])
          yield* relist(integrity)
          expect(yield* waitingAfterTtl).toMatchObject([{ approvalId: asked.body.approvalId }])
        }),
        NodeServer.layer({ marketplaceUrl: market.baseUrl, registryUrl: registry.url })
      )
    }))
})
