/**
 * GET /inbox does not wait on the package directory for waiting install approvals it has a recent answer for
 * (services/node/ListingCache.ts): a directory that hangs delays a read by at most the first wait, once; reads
 * in between answer from the last listing and refresh it off the read path; concurrent reads share one directory
 * request per package; the node's own changes reach the cache at once. The directory is a stand-in marketplace
 * over real HTTP that counts the requests per package and can hold them (a hang); time is the TestClock's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defaultFreshness, ListingCache } from "../../../services/node/ListingCache.js"
import { type ApprovalRecord, PackageRecords } from "../../../services/node/PackageRecords.js"
import { typedClient, wire } from "../../support/NodeFixtures.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import * as Registry from "../../support/registry/Registry.js"
import { integrityOf, packFolder } from "../../support/registry/Tarballs.js"
import * as StandIn from "./DirectoryStandIn.js"
import { inbox } from "./Support.js"

const { firstWait, refreshAfter, ttl } = defaultFreshness
const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../examples/packages")

const waitingIds = Effect.map(
  inbox(),
  (page) => page.waiting.flatMap((w) => (w.kind === "install-approval" ? [w.approvalId] : [])).sort()
)

const integrity = (n: number) => "sha512-" + Buffer.alloc(64, n).toString("base64")

const standIn = (listed: ReadonlyArray<StandIn.Listed>) =>
  Effect.acquireRelease(Effect.promise(() => StandIn.start(listed)), (s) => Effect.promise(() => s.close()))

/** A waiting approval written as the installer writes one, for a package the stand-in lists. */
const approvalFor = (packageId: string, digest: string) =>
  Effect.gen(function*() {
    const node = yield* TestNode
    const approval: ApprovalRecord = {
      approvalId: `apr_${packageId.replace(/\W/g, "")}`,
      packageId,
      source: "marketplace",
      version: "1.0.0",
      digest,
      contentDigest: "sha256:" + "0".repeat(64),
      operationDigest: "sha256:" + "1".repeat(64),
      asksFor: [],
      riskTier: "sandboxed",
      status: "waiting",
      askedBy: "person",
      requestedAt: "1970-01-01T00:00:00.000Z",
      expiresAt: "1970-01-01T00:10:00.000Z",
      decidedAt: null
    }
    yield* Context.get(node.services, PackageRecords).insertApproval(approval)
    return approval.approvalId
  })

const settled = Effect.flatMap(TestNode, (node) => Context.get(node.services, ListingCache).settled)

describe("waiting install approvals without a directory round trip", () => {
  it.scoped("a directory that hangs holds GET /inbox at most the first wait, once; a known answer needs no request", () =>
    Effect.gen(function*() {
      const directory = yield* standIn([{ name: "pkg-a", version: "1.0.0", integrity: integrity(1) }])
      yield* Effect.provide(
        Effect.gen(function*() {
          const id = yield* approvalFor("pkg-a", integrity(1))
          directory.hold()
          // Nothing known yet: the read waits for the request, at most the first wait, then leaves the approval out.
          const first = yield* Effect.fork(waitingIds)
          yield* Effect.promise(() => directory.arrived(1))
          yield* TestClock.adjust(firstWait)
          expect(yield* Fiber.join(first)).toEqual([])
          // The request still hangs; its wait is spent: the next read answers at once, with no second request.
          expect(yield* waitingIds).toEqual([])
          expect(directory.requests("pkg-a")).toBe(1)
          directory.release()
          yield* settled
          expect(yield* waitingIds).toEqual([id])

          // An ageing answer is used while its refresh hangs (the clock does not move while these reads run).
          directory.hold()
          yield* TestClock.adjust(refreshAfter)
          expect(yield* waitingIds).toEqual([id])
          yield* Effect.promise(() => directory.arrived(2))
          expect(yield* waitingIds).toEqual([id])
          expect(directory.requests("pkg-a")).toBe(2)
          directory.release()
          yield* settled
          expect(yield* waitingIds).toEqual([id])
          expect(directory.requests("pkg-a")).toBe(2)
        }),
        NodeServer.layer({ marketplaceUrl: directory.url })
      )
    }))

  it.scoped("a listing change shows within the TTL: a read in between answers from the last listing and refreshes it", () =>
    Effect.gen(function*() {
      const directory = yield* standIn([{ name: "pkg-a", version: "1.0.0", integrity: integrity(1) }])
      yield* Effect.provide(
        Effect.gen(function*() {
          const id = yield* approvalFor("pkg-a", integrity(1))
          expect(yield* waitingIds).toEqual([id])
          directory.list({ name: "pkg-a", version: "1.0.0", integrity: integrity(2) })
          // A fresh answer: used as it is, without a request.
          expect(yield* waitingIds).toEqual([id])
          expect(directory.requests("pkg-a")).toBe(1)
          // Ageing: this read still lists it and refreshes in the background; the refreshed answer hides it.
          yield* TestClock.adjust(refreshAfter)
          expect(yield* waitingIds).toEqual([id])
          yield* settled
          expect(directory.requests("pkg-a")).toBe(2)
          expect(yield* waitingIds).toEqual([])
          // Unlisted, then listed again with the approved bytes: each shows after the TTL at the latest.
          directory.list(null, "pkg-a")
          yield* TestClock.adjust(ttl)
          expect(yield* waitingIds).toEqual([])
          directory.list({ name: "pkg-a", version: "1.0.0", integrity: integrity(1) })
          yield* TestClock.adjust(ttl)
          expect(yield* waitingIds).toEqual([id])
          expect(directory.requests("pkg-a")).toBe(4)
        }),
        NodeServer.layer({ marketplaceUrl: directory.url })
      )
    }))

  it.scoped("concurrent reads share one directory request per package per refresh", () =>
    Effect.gen(function*() {
      const names = ["pkg-a", "pkg-b", "pkg-c"]
      const directory = yield* standIn(names.map((name, i) => ({ name, version: "1.0.0", integrity: integrity(i + 1) })))
      yield* Effect.provide(
        Effect.gen(function*() {
          const ids = (yield* Effect.forEach(names, (name, i) => approvalFor(name, integrity(i + 1)))).sort()
          const eight = Effect.all(Array.from({ length: 8 }, () => waitingIds), { concurrency: "unbounded" })
          // Nothing known: the reads wait on one request per package, answered only once all three arrived.
          directory.hold()
          const cold = yield* Effect.fork(eight)
          yield* Effect.promise(() => directory.arrived(3))
          directory.release()
          expect(yield* Fiber.join(cold)).toEqual(Array.from({ length: 8 }, () => ids))
          yield* settled
          expect(names.map(directory.requests)).toEqual([1, 1, 1])
          // Ageing: eight reads finish while the refreshes hang, and start one refresh per package between them.
          directory.hold()
          yield* TestClock.adjust(refreshAfter)
          expect(yield* eight).toEqual(Array.from({ length: 8 }, () => ids))
          yield* Effect.promise(() => directory.arrived(6))
          directory.release()
          yield* settled
          expect(yield* eight).toEqual(Array.from({ length: 8 }, () => ids))
          expect(names.map(directory.requests)).toEqual([2, 2, 2])
        }),
        NodeServer.layer({ marketplaceUrl: directory.url })
      )
    }))

  it.scoped("the node's own changes reach the cache: an install's answer lists its approval, an added folder forgets it", () =>
    Effect.gen(function*() {
      const name = "@clark-examples/tide-widget"
      const manifest = JSON.parse(fs.readFileSync(path.join(examples, "tide-widget/package.json"), "utf8")).clark
      const registry = yield* Registry.start
      const tarball = yield* Effect.promise(() => packFolder(path.join(examples, "tide-widget")))
      registry.publish({ name, version: "1.0.0", tarball })
      const directory = yield* standIn([{
        name,
        version: "1.0.0",
        integrity: integrityOf(tarball),
        facets: manifest.facets,
        permissions: manifest.permissions
      }])
      yield* Effect.provide(
        Effect.gen(function*() {
          const client = yield* typedClient("person")
          const asked = yield* Effect.orDie(wire(client.packages.install({ payload: { packageId: name }, withResponse: true })))
          expect(asked).toMatchObject({ status: 202, body: { code: "APPROVAL_REQUIRED" } })
          // The installer's own request answered for the inbox too.
          expect(directory.requests(name)).toBe(1)
          expect(yield* waitingIds).toEqual([asked.body.approvalId])
          expect(directory.requests(name)).toBe(1)
          // A folder of that package with other bytes: the directory now answers with it, at once, clock unmoved.
          const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clark-cache-")), "tide-widget")
          fs.cpSync(path.join(examples, "tide-widget"), folder, { recursive: true })
          fs.writeFileSync(path.join(folder, "widget/index.html"), "<p>other bytes</p>")
          yield* Effect.orDie(client.packages.addLocal({ payload: { path: folder } }))
          expect(yield* waitingIds).toEqual([])
        }),
        NodeServer.layer({ marketplaceUrl: directory.url, registryUrl: registry.url })
      )
    }))
})
