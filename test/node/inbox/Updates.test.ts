/**
 * Update notices against the real node: a package's newer version and the engine's. The engine's offers only
 * Dismiss and Skip this version; skipping hides that version and older ones, unskip and DELETE of the skipped
 * version (each part URL-encoded) bring it back; `update` of a package that is not installed is unavailable
 * (package-gone); skip-version on any other notice is 409 NOT_AN_UPDATE.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, query } from "../../support/NodeFixtures.js"
import { act, expiredQuestion, inbox, questionTtl, script, writeNotice } from "./Support.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, NodeServer.layer({ script, turns: { questionTtl } }))

const actionsOf = (notice: { readonly actions: ReadonlyArray<{ readonly action: string; readonly unavailable?: string | undefined }> }) =>
  notice.actions.map((a) => (a.unavailable === undefined ? a.action : `${a.action}:${a.unavailable}`))

describe("update notices", () => {
  it.scoped("the engine's newer version: only Dismiss and Skip this version; skipping hides it and older ones until unskipped", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      writeNotice(node.dataDir, { id: "ntc_engine2", kind: "engine-update", data: { name: "engine", version: "2.0.0" }, source: "pi:engine" })
      writeNotice(node.dataDir, { id: "ntc_engine1", kind: "engine-update", data: { name: "engine", version: "1.9.0" }, source: "pi:engine" })
      const page = yield* inbox()
      const engine = page.notices.find((n) => n.noticeId === "ntc_engine2")!
      expect(engine).toMatchObject({ kind: "engine-update", package: { kind: "pi", name: "engine" }, version: "2.0.0" })
      expect(actionsOf(engine)).toEqual(["dismiss", "skip-version"])
      for (const name of ["mark-read", "snooze", "ask-again", "update", "retry", "suppress"]) {
        expect(yield* act("ntc_engine2", name, name === "snooze" ? { until: new Date(Date.now() + 60_000).toISOString() } : {}))
          .toMatchObject({ status: 409, body: { code: "ACTION_NOT_OFFERED" } })
      }

      expect(yield* act("ntc_engine2", "skip-version")).toMatchObject({
        status: 200,
        body: { noticeId: "ntc_engine2", action: "skip-version", outcome: "done", version: "2.0.0" }
      })
      let after = yield* inbox()
      // That version and the older one are no longer reported.
      expect(after.notices.map((n) => n.noticeId)).not.toContain("ntc_engine2")
      expect(after.notices.map((n) => n.noticeId)).not.toContain("ntc_engine1")
      expect(after.skippedVersions).toEqual([{ kind: "pi", name: "engine", version: "2.0.0", skippedAt: expect.any(String) }])

      const client = node
      expect(yield* client.request("POST", "/inbox/notices/ntc_engine2/unskip-version")).toMatchObject({
        status: 200,
        body: { noticeId: "ntc_engine2", kind: "pi", name: "engine", version: "2.0.0", skipped: false }
      })
      after = yield* inbox()
      expect(after.notices.map((n) => n.noticeId)).toEqual(expect.arrayContaining(["ntc_engine2", "ntc_engine1"]))
      expect(after.skippedVersions).toEqual([])

      expect((yield* client.request("POST", "/inbox/notices/ntc_engine1/skip-version")).body).toMatchObject({ skipped: true, version: "1.9.0" })
      expect((yield* inbox()).notices.map((n) => n.noticeId)).toContain("ntc_engine2")
      expect(yield* client.request("DELETE", "/inbox/skipped-versions/pi/engine/1.9.0")).toMatchObject({ status: 200, body: { removed: true } })
      expect(yield* client.request("DELETE", "/inbox/skipped-versions/pi/engine/1.9.0")).toMatchObject({
        status: 404,
        body: { code: "RESOURCE_NOT_FOUND" }
      })
      expect(yield* client.request("DELETE", "/inbox/skipped-versions/app/engine/1.9.0")).toMatchObject({
        status: 400,
        body: { code: "INVALID_INPUT" }
      })
      expect((yield* act("ntc_engine2", "dismiss")).status).toBe(200)
    })))

  it.scoped("a package's newer version: skip newest first, DELETE with URL-encoded parts; update of a package not installed is unavailable", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      writeNotice(node.dataDir, {
        id: "ntc_pkg2",
        kind: "package-update",
        data: { name: "@scope/pkg", version: "2.0.0" },
        source: "package:@scope/pkg",
        createdAt: "2026-01-02T00:00:00.000Z"
      })
      writeNotice(node.dataDir, {
        id: "ntc_other",
        kind: "package-update",
        data: { name: "other", version: "1.1.0" },
        source: "package:other",
        createdAt: "2026-01-01T00:00:00.000Z"
      })
      const pkg = (yield* inbox()).notices.find((n) => n.noticeId === "ntc_pkg2")!
      expect(pkg).toMatchObject({ package: { kind: "package", name: "@scope/pkg" }, version: "2.0.0", suppressed: false })
      expect(actionsOf(pkg)).toEqual([
        "update:package-gone", "skip-version", "review-update:package-gone", "mark-read", "snooze", "suppress", "dismiss",
        "ask-clark", "add-to-context", "copy-details"
      ])
      expect(yield* act("ntc_pkg2", "update")).toMatchObject({
        status: 409,
        body: { code: "ACTION_UNAVAILABLE", action: "update", unavailable: "package-gone" }
      })
      expect(yield* act("ntc_pkg2", "update", {}, "cli-api")).toMatchObject({ status: 403, body: { code: "PERSON_ONLY" } })
      expect(yield* act("ntc_pkg2", "review-update")).toMatchObject({ status: 409, body: { code: "SURFACE_ACTION" } })

      // Suppress silences the package's source; unsuppress lifts it.
      expect((yield* act("ntc_pkg2", "suppress")).status).toBe(200)
      expect((yield* inbox()).notices.find((n) => n.noticeId === "ntc_pkg2")).toMatchObject({ suppressed: true })
      expect((yield* act("ntc_pkg2", "suppress")).body.code).toBe("ACTION_NOT_OFFERED")
      expect((yield* act("ntc_pkg2", "unsuppress")).status).toBe(200)
      expect(query(node.dataDir, "SELECT * FROM notice_suppressions")).toEqual([])

      expect((yield* node.request("POST", "/inbox/notices/ntc_other/skip-version")).status).toBe(200)
      expect((yield* node.request("POST", "/inbox/notices/ntc_pkg2/skip-version")).status).toBe(200)
      const skipped = (yield* inbox()).skippedVersions
      expect(skipped.map((s) => s.name)).toEqual(["@scope/pkg", "other"])
      expect(yield* node.request("DELETE", `/inbox/skipped-versions/package/${encodeURIComponent("@scope/pkg")}/2.0.0`))
        .toMatchObject({ status: 200, body: { removed: true } })
      expect((yield* inbox()).notices.map((n) => n.noticeId)).toContain("ntc_pkg2")
    })))

  it.scoped("skip-version and unskip-version of a notice that is not an update are 409 NOT_AN_UPDATE; of none, 404", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { notice } = yield* expiredQuestion(yield* conversation)
      for (const route of ["skip-version", "unskip-version"]) {
        expect(yield* node.request("POST", `/inbox/notices/${notice.noticeId}/${route}`)).toMatchObject({
          status: 409,
          body: { code: "NOT_AN_UPDATE" }
        })
        expect(yield* node.request("POST", `/inbox/notices/ntc_none/${route}`)).toMatchObject({
          status: 404,
          body: { code: "RESOURCE_NOT_FOUND" }
        })
      }
      expect(query(node.dataDir, "SELECT * FROM skipped_versions")).toEqual([])
    })))
})
