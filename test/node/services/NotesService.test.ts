/**
 * The notes-service example through the runtime, run from a copy outside the repository (as from the
 * node's cache, with no node_modules anywhere above it): its bundled entry answers the manifest's tools and
 * keeps its notes in the data folder the node gives it, never in its cache copy.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { dataFolderOf } from "../../../layers/node/services/ServiceEnv.js"
import { ServiceRuntime } from "../../../services/node/ServiceRuntime.js"
import { examplesFolder, layer, packageAt, tempDir } from "./fixtures/Services.js"

const cacheCopy = () => {
  const target = path.join(tempDir("clark-cache-"), "notes-service")
  fs.cpSync(path.join(examplesFolder, "notes-service"), target, { recursive: true })
  return target
}

const texts = (content: ReadonlyArray<{ readonly type: string; readonly [k: string]: unknown }>) =>
  content.map((block) => (block.type === "text" ? block.text : block.type))

describe("notes-service example", () => {
  it.scoped("offers its tools and answers save_note, list_notes and index_notes", () => {
    const dataDir = tempDir("clark-services-")
    const cachePath = cacheCopy()
    const pkg = packageAt(cachePath)
    return Effect.gen(function*() {
      const runtime = yield* ServiceRuntime
      const offered = yield* runtime.tools(pkg)
      expect(offered.map((tool) => [tool.name, tool.risk])).toEqual([
        ["list_notes", "read"],
        ["save_note", "local-write"],
        ["index_notes", "local-write"]
      ])

      expect(texts((yield* runtime.call(pkg, { tool: "list_notes", input: {} })).content)).toEqual(["No notes yet."])
      const saved = yield* runtime.call(pkg, { tool: "save_note", input: { title: "Groceries", text: "eggs, flour" } })
      expect(saved).toEqual({ content: [{ type: "text", text: "Saved \"Groceries\"." }], isError: false })
      yield* runtime.call(pkg, { tool: "save_note", input: { title: "Ideas", text: "a tide clock" } })
      yield* runtime.call(pkg, { tool: "save_note", input: { title: "Groceries", text: "eggs, flour, milk" } })

      const listed = yield* runtime.call(pkg, { tool: "list_notes", input: { limit: 10 } })
      expect(listed.isError).toBe(false)
      expect([...(listed.structuredContent as { titles: Array<string> }).titles].sort()).toEqual(["Groceries", "Ideas"])

      const refused = yield* runtime.call(pkg, { tool: "save_note", input: { title: "", text: "x" } })
      expect(refused.isError).toBe(true)

      const progress = yield* Ref.make(0)
      const indexed = yield* runtime.call(pkg, {
        tool: "index_notes",
        input: {},
        onProgress: () => Ref.update(progress, (n) => n + 1)
      })
      expect(texts(indexed.content)).toEqual(["Indexed 2 notes, 8 words."])
      expect(yield* Ref.get(progress)).toBe(2)

      const folder = dataFolderOf(dataDir, pkg.packageId)
      expect(fs.readdirSync(path.join(folder, "notes"))).toHaveLength(2)
      expect(JSON.parse(fs.readFileSync(path.join(folder, "index.json"), "utf8")).milk).toEqual(["Groceries"])
      expect(fs.existsSync(path.join(cachePath, ".data"))).toBe(false)
    }).pipe(Effect.provide(layer({ dataDir })))
  })
})
