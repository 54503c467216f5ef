/**
 * `update` from a package-update notice, end to end: a real marketplace lists the package, a local registry
 * stand-in serves its tarball, and the node installed an older version. The notice appears once the directory
 * shows the newer version; `update` installs it through the installer (its counts in the answer), asks first
 * when the execution mode says so (202, the same waiting approval on a second press, listed in the inbox's waiting
 * items), passes the installer's refusals on unchanged, and is unavailable once the package is current.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { startMarketplace } from "../../support/MarketplaceServer.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { Database, typedClient } from "../../support/NodeFixtures.js"
import * as Registry from "../../support/registry/Registry.js"
import { integrityOf, packFolder } from "../../support/registry/Tarballs.js"
import { act, inbox } from "./Support.js"

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../examples/packages")
const name = "@clark-examples/harbour-theme"
const manifest = JSON.parse(fs.readFileSync(path.join(examples, "harbour-theme/package.json"), "utf8"))

const catalogue = (integrity: string) => ({
  packages: [{
    name,
    displayName: "Harbour theme",
    description: "A theme",
    curationStatus: "listed",
    updatedAt: "2026-11-01T00:00:00.000Z",
    versions: [{
      version: manifest.version,
      publishedAt: "2026-11-01T00:00:00.000Z",
      indexedAt: "2026-11-01T00:05:00.000Z",
      registryIntegrity: integrity,
      tarballSha512Verified: true,
      facets: manifest.clark.facets,
      permissions: manifest.clark.permissions
    }]
  }]
})

/** Makes the node believe an older version is installed, as after an earlier install. */
const olderInstalled = (dataDir: string) => {
  const db = new Database(path.join(dataDir, "node.db"))
  try {
    db.prepare("UPDATE installed_packages SET version = '0.0.1' WHERE package_id = ?").run(name)
  } finally {
    db.close()
  }
}

describe("update from a package-update notice", () => {
  it.scoped("installs the newer version, asks first when the mode says so, passes refusals on, and is then already-current", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const tarball = yield* Effect.promise(() => packFolder(path.join(examples, "harbour-theme")))
      registry.publish({ name, version: manifest.version, tarball })
      const market = yield* Effect.acquireRelease(
        Effect.promise(() => startMarketplace("sqlite", catalogue(integrityOf(tarball)))),
        (running) => Effect.promise(() => running.close())
      )
      yield* Effect.provide(
        Effect.gen(function*() {
          const node = yield* TestNode
          const client = yield* typedClient("person")
          const first = yield* client.packages.install({ payload: { packageId: name } })
          expect(first).toMatchObject({ outcome: "installed", version: manifest.version })
          olderInstalled(node.dataDir)

          const notice = (yield* inbox()).notices.find((n) => n.kind === "package-update")!
          expect(notice).toMatchObject({ package: { kind: "package", name }, version: manifest.version })
          expect(notice.actions.find((a) => a.action === "update")).toEqual({ action: "update" })

          const updated = yield* act(notice.noticeId, "update")
          expect(updated).toMatchObject({
            status: 200,
            body: {
              noticeId: notice.noticeId,
              action: "update",
              outcome: "done",
              version: manifest.version,
              pendingCapabilities: expect.any(Number),
              deniedCapabilities: expect.any(Number)
            }
          })
          // Current now: listed with the reason, refused with it.
          const current = (yield* inbox()).notices.find((n) => n.noticeId === notice.noticeId)!
          expect(current.actions.find((a) => a.action === "update")).toEqual({ action: "update", unavailable: "already-current" })
          expect(yield* act(notice.noticeId, "update")).toMatchObject({
            status: 409,
            body: { code: "ACTION_UNAVAILABLE", unavailable: "already-current" }
          })

          // Identical presses at once: one installs; the others find it installing or already current.
          olderInstalled(node.dataDir)
          const presses = yield* Effect.all(Array.from({ length: 6 }, () => act(notice.noticeId, "update")), {
            concurrency: "unbounded"
          })
          expect(presses.filter((p) => p.status === 200)).toHaveLength(1)
          for (const refused of presses.filter((p) => p.status !== 200)) {
            expect(refused.status).toBe(409)
            expect(["ACTION_IN_PROGRESS", "ACTION_UNAVAILABLE"]).toContain(refused.body.code)
          }

          // The mode asks: 202 approval-required, nothing installed; a second press reuses the waiting approval.
          yield* client.preferences.setInstallMode({ payload: { value: "always-ask" } })
          olderInstalled(node.dataDir)
          const asked = yield* act(notice.noticeId, "update")
          expect(asked).toMatchObject({
            status: 202,
            body: { noticeId: notice.noticeId, action: "update", outcome: "approval-required", approvalId: expect.any(String) }
          })
          const again = yield* act(notice.noticeId, "update")
          expect(again).toMatchObject({ status: 202, body: { approvalId: asked.body.approvalId } })
          const waiting = (yield* inbox()).waiting
          expect(waiting).toEqual([{
            kind: "install-approval",
            approvalId: asked.body.approvalId,
            package: name,
            version: manifest.version,
            asks: manifest.clark.permissions,
            riskTier: expect.any(String),
            operationDigest: expect.stringMatching(/^sha256:/),
            requestedAt: expect.any(String),
            expiresAt: expect.any(String)
          }])
          // The shape was just checked above: an install approval with both instants.
          const approval = waiting[0] as unknown as { readonly requestedAt: string; readonly expiresAt: string }
          expect(Date.parse(approval.expiresAt) - Date.parse(approval.requestedAt)).toBe(10 * 60 * 1000)
          // It leaves the waiting items when it expires, and a notice says so.
          yield* TestClock.adjust(Duration.minutes(11))
          const expired = yield* inbox()
          expect(expired.waiting).toEqual([])

          // A refusal of the installer passes on unchanged.
          yield* client.preferences.setInstallMode({ payload: { value: "off" } })
          expect(yield* act(notice.noticeId, "update")).toMatchObject({ status: 403, body: { code: "POLICY_REFUSED" } })
        }),
        NodeServer.layer({ marketplaceUrl: market.baseUrl, registryUrl: registry.url })
      )
    }))
})
