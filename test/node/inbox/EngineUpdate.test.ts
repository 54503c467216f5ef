/**
 * Engine-update notices from the versions the host application passes at launch (CC_ENGINE_VERSION, the engine it
 * runs; CC_ENGINE_NEWEST, the newest its release channel knows): the real CLI's node reads them from its
 * environment; the in-process node on one data dir across launches shows one notice per newer version with only
 * Dismiss and Skip this version, keeps a dismissed one dismissed, and hides it once the application runs that
 * engine. The settings' rules as a table.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { EngineConfig } from "../../../layers/node/inbox/Engine.js"
import { engineUpdateOf } from "../../../services/node/Notices.js"
import * as NodeServer from "../../support/NodeServer.js"
import { spawnNode } from "../../support/NodeProcess.js"
import { query } from "../../support/NodeFixtures.js"
import { act, inbox } from "./Support.js"

const actionsOf = (notice: { readonly actions: ReadonlyArray<{ readonly action: string }> }) => notice.actions.map((a) => a.action)

const engineNotices = Effect.map(inbox(), (page) => page.notices.filter((n) => n.kind === "engine-update"))

const launch = <A, E, R>(dataDir: string, running: string, newest: string, effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, NodeServer.layer({ dataDir, engine: { running, newest } }))

describe("engine-update notices", () => {
  it.scoped("the real node reads the versions from its environment: only Dismiss and Skip this version", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const node = yield* spawnNode({
        dataDir,
        script: { rules: [] },
        env: { CC_ENGINE_VERSION: "1.4.0", CC_ENGINE_NEWEST: "1.5.0" }
      })
      const page = yield* node.fetchJson("GET", "/inbox")
      expect(page.status).toBe(200)
      const notices = page.body.notices.filter((n: any) => n.kind === "engine-update")
      expect(notices).toMatchObject([{
        title: "A newer assistant engine is available",
        body: "Version 1.5.0 arrives with the next application release.",
        package: { kind: "pi", name: "engine" },
        version: "1.5.0",
        conversationId: null,
        actions: [{ action: "dismiss" }, { action: "skip-version" }]
      }])
      const id = notices[0].noticeId as string
      // No Ask: ask-again, update and the rest are not offered; skip-version is, and lists the version skipped.
      for (const action of ["ask-again", "update", "mark-read", "snooze"]) {
        expect((yield* node.fetchJson("POST", `/inbox/notices/${id}/actions/${action}`, {})).body.code, action)
          .toBe("ACTION_NOT_OFFERED")
      }
      expect(yield* node.fetchJson("POST", `/inbox/notices/${id}/actions/skip-version`, {})).toMatchObject({
        status: 200,
        body: { action: "skip-version", outcome: "done", version: "1.5.0" }
      })
      const after = yield* node.fetchJson("GET", "/inbox")
      expect(after.body.notices.filter((n: any) => n.kind === "engine-update")).toEqual([])
      expect(after.body.skippedVersions).toMatchObject([{ kind: "pi", name: "engine", version: "1.5.0" }])
    }))

  it.scoped("one notice per newer version across launches; dismissed stays dismissed; gone once the engine is current", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const id = yield* launch(dataDir, "1.4.0", "1.5.0", Effect.gen(function*() {
        const notices = yield* engineNotices
        expect(notices.map((n) => [n.version, actionsOf(n)])).toEqual([["1.5.0", ["dismiss", "skip-version"]]])
        expect((yield* act(notices[0]!.noticeId, "dismiss")).status).toBe(200)
        return notices[0]!.noticeId
      }))
      // The same launch again: the dismissed notice is not written anew.
      yield* launch(dataDir, "1.4.0", "1.5.0", Effect.gen(function*() {
        expect(yield* engineNotices).toEqual([])
        expect(query(dataDir, "SELECT id, dismissed_at IS NOT NULL AS dismissed FROM notices WHERE kind = 'engine-update'"))
          .toEqual([{ id, dismissed: 1 }])
      }))
      // A later release knows a newer engine still: a new notice for that version.
      yield* launch(dataDir, "1.5.0", "1.6.0-beta.1", Effect.gen(function*() {
        expect((yield* engineNotices).map((n) => n.version)).toEqual(["1.6.0-beta.1"])
      }))
      // The application now runs it: the notice is no longer shown, and nothing new is written.
      yield* launch(dataDir, "1.6.0", "1.6.0", Effect.gen(function*() {
        expect(yield* engineNotices).toEqual([])
        expect(query(dataDir, "SELECT count(*) AS n FROM notices WHERE kind = 'engine-update'")).toEqual([{ n: 2 }])
      }))
    }))

  it.each([
    ["neither set: no engine notices", {}, Either.right(null)],
    ["both set", { CC_ENGINE_VERSION: "1.4.0", CC_ENGINE_NEWEST: "2.0.0" }, Either.right({ running: "1.4.0", newest: "2.0.0" })],
    ["a pre-release", { CC_ENGINE_VERSION: "1.4.0", CC_ENGINE_NEWEST: "1.5.0-rc.1" }, Either.right({ running: "1.4.0", newest: "1.5.0-rc.1" })],
    ["only the running one", { CC_ENGINE_VERSION: "1.4.0" }, "error"],
    ["only the newest", { CC_ENGINE_NEWEST: "1.4.0" }, "error"],
    ["not a version", { CC_ENGINE_VERSION: "latest", CC_ENGINE_NEWEST: "1.4.0" }, "error"],
    ["a path, not a version", { CC_ENGINE_VERSION: "1.4.0", CC_ENGINE_NEWEST: "../1.5.0" }, "error"]
  ] as const)("settings: %s", (_, env, expected) => {
    const read = Effect.runSync(Effect.either(Effect.withConfigProvider(EngineConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))
    if (expected === "error") expect(Either.isLeft(read)).toBe(true)
    else expect(read).toEqual(expected)
  })

  it.each([
    ["newer", { running: "1.4.0", newest: "1.5.0" }, "engine@1.5.0"],
    ["the same", { running: "1.5.0", newest: "1.5.0" }, null],
    ["older (a downgrade channel)", { running: "1.5.0", newest: "1.4.9" }, null],
    ["a release after its pre-release", { running: "1.5.0-rc.1", newest: "1.5.0" }, "engine@1.5.0"]
  ] as const)("a notice when the newest is %s", (_, versions, subject) => {
    expect(engineUpdateOf(versions)?.subjectId ?? null).toBe(subject)
  })
})
