/**
 * POST /app-intents (the appearance intents) through the real node: each is done at once, from any surface,
 * without a confirmation; what it stores; a theme the node cannot use and a malformed intent store nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { query, typedClient, wire } from "../../support/NodeFixtures.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../examples/packages")

const onNode = <A, E>(effect: Effect.Effect<A, E, TestNode>) => Effect.provide(effect, NodeServer.layer({}))

const perform = (body: unknown, as: NodeServer.As = "person") =>
  Effect.flatMap(TestNode, (node) => node.request("POST", "/app-intents", { body, as }))

const stored = (dataDir: string) =>
  Object.fromEntries(
    query(dataDir, "SELECT key, value FROM preferences WHERE key LIKE 'experience.%' ORDER BY key").map((row) => [
      row.key,
      JSON.parse(row.value)
    ])
  )

describe("POST /app-intents", () => {
  it.scoped("sets the theme, the colour scheme, resets the customization and opens the gallery, none asking first", () =>
    onNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient("cli-api")
      // The typed client, from a machine surface: no confirmation, no person-only refusal.
      const scheme = yield* wire(client.appIntents.perform({
        payload: { kind: "appearance.set-color-scheme", colorScheme: "dark" },
        withResponse: true
      }))
      expect(scheme).toEqual({ status: 200, body: { kind: "appearance.set-color-scheme", outcome: "done" } })
      expect(yield* perform({ kind: "appearance.set-theme", themeRef: "builtin:app" })).toMatchObject({
        status: 200,
        body: { kind: "appearance.set-theme", outcome: "done" }
      })
      expect(stored(node.dataDir)).toEqual({ "experience.colorScheme": "dark", "experience.themeRef": "builtin:app" })

      // Reset restores the customization and keeps the theme and the colour scheme.
      expect((yield* perform({ kind: "appearance.reset" })).status).toBe(200)
      expect(stored(node.dataDir)).toEqual({
        "experience.accent": null,
        "experience.codeFont": null,
        "experience.colorScheme": "dark",
        "experience.density": "comfortable",
        "experience.font": null,
        "experience.themeRef": "builtin:app"
      })
      const before = stored(node.dataDir)
      expect(yield* perform({ kind: "appearance.open-theme-gallery" })).toMatchObject({
        status: 200,
        body: { kind: "appearance.open-theme-gallery", outcome: "done" }
      })
      expect(stored(node.dataDir)).toEqual(before)
      expect(query(node.dataDir, "SELECT surface, detail FROM audit_log WHERE kind = 'app-intent' ORDER BY id").map((row) =>
        [row.surface, JSON.parse(row.detail).intent]
      )).toEqual([
        ["cli-api", "appearance.set-color-scheme"],
        ["person", "appearance.set-theme"],
        ["person", "appearance.reset"],
        ["person", "appearance.open-theme-gallery"]
      ])
    })))

  it.scoped("takes an installed package's theme; refuses one not installed or not declared, storing nothing", () =>
    onNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      const missing = yield* perform({ kind: "appearance.set-theme", themeRef: "package:@clark-examples/harbour-theme#harbour" })
      expect([missing.status, missing.body.code]).toEqual([409, "THEME_NOT_INSTALLED"])
      const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clark-pkg-")), "harbour-theme")
      fs.cpSync(path.join(examples, "harbour-theme"), folder, { recursive: true })
      const listing = yield* Effect.orDie(client.packages.addLocal({ payload: { path: folder } }))
      const installed = yield* node.request("POST", "/packages/install", {
        body: { packageId: listing.packageId, localDigest: listing.contentDigest }
      })
      expect(installed.status).toBe(200)
      const unknown = yield* perform({ kind: "appearance.set-theme", themeRef: "package:@clark-examples/harbour-theme#lagoon" })
      expect([unknown.status, unknown.body.code]).toEqual([409, "THEME_UNKNOWN"])
      expect(stored(node.dataDir)).toEqual({})
      const chosen = yield* perform({ kind: "appearance.set-theme", themeRef: "package:@clark-examples/harbour-theme#harbour" })
      expect(chosen.status).toBe(200)
      expect(stored(node.dataDir)).toEqual({ "experience.themeRef": "package:@clark-examples/harbour-theme#harbour" })
    })))

  it.scoped("refuses malformed intents with 400 INVALID_INPUT and stores nothing", () =>
    onNode(Effect.gen(function*() {
      const node = yield* TestNode
      for (
        const body of [
          { kind: "appearance.set-color-scheme", colorScheme: "sepia" },
          { kind: "appearance.set-theme", themeRef: "https://example.com/theme.css" },
          { kind: "appearance.set-theme" },
          { kind: "appearance.delete-everything" },
          { kind: "appearance.set-theme", themeRef: "x".repeat(10_000) },
          [],
          "appearance.reset"
        ]
      ) {
        const refused = yield* perform(body)
        expect([refused.status, refused.body.code]).toEqual([400, "INVALID_INPUT"])
      }
      expect(stored(node.dataDir)).toEqual({})
    })))
})
