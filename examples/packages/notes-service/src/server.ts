/**
 * The notes service: an MCP server over stdio whose tools are the ones its package.json declares, with the
 * JSON Schemas declared there (the node offers the manifest's schemas to the model, so the server answers
 * with the same ones rather than a second copy that could drift).
 *
 * Notes live in the folder the node gives the service (`CLARK_PACKAGE_DATA_DIR`), or in `.data` under the
 * working directory when it runs on its own. Built by scripts/build-examples.mjs into one file,
 * dist/server.js, because a package in the node's cache has no node_modules.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import pkg from "../package.json" with { type: "json" }

interface Note {
  readonly title: string
  readonly text: string
  readonly savedAt: string
}

const dataDir = process.env.CLARK_PACKAGE_DATA_DIR ?? path.join(process.cwd(), ".data")
const notesDir = path.join(dataDir, "notes")

/** A note's file is named by the hash of its title: any title is a safe file name, and the same title replaces. */
const noteFile = (title: string) => path.join(notesDir, `${createHash("sha256").update(title).digest("hex")}.json`)

const readNotes = async (): Promise<Array<Note>> => {
  const names = await fs.readdir(notesDir).catch(() => [] as Array<string>)
  const notes: Array<Note> = []
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    try {
      notes.push(JSON.parse(await fs.readFile(path.join(notesDir, name), "utf8")) as Note)
    } catch {
      // A note being replaced right now, or a stray file: not a note to list.
    }
  }
  return notes.sort((a, b) => b.savedAt.localeCompare(a.savedAt) || a.title.localeCompare(b.title))
}

/** Written beside and renamed over, so a reader never sees half a note. */
const writeAtomic = async (file: string, contents: string) => {
  const temporary = `${file}.${process.pid}.tmp`
  await fs.writeFile(temporary, contents)
  await fs.rename(temporary, file)
}

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] })
const failed = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }], isError: true })

const str = (input: Record<string, unknown>, key: string, max: number): string | undefined => {
  const value = input[key]
  return typeof value === "string" && value.length <= max ? value : undefined
}

const server = new Server({ name: pkg.name, version: pkg.version }, { capabilities: { tools: {} } })

server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: pkg.clark.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as { type: "object"; [key: string]: unknown }
  }))
}))

server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
  const input = request.params.arguments ?? {}
  switch (request.params.name) {
    case "list_notes": {
      const limit = input.limit === undefined ? 20 : input.limit
      if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 100) {
        return failed("limit must be a whole number from 1 to 100")
      }
      const notes = (await readNotes()).slice(0, limit)
      return {
        content: [{ type: "text", text: notes.length === 0 ? "No notes yet." : notes.map((n) => n.title).join("\n") }],
        structuredContent: { titles: notes.map((n) => n.title) }
      }
    }
    case "save_note": {
      const title = str(input, "title", 200)
      const body = str(input, "text", 20000)
      if (title === undefined || title.trim() === "") return failed("title must be a non-empty text of at most 200 characters")
      if (body === undefined) return failed("text must be a text of at most 20000 characters")
      await fs.mkdir(notesDir, { recursive: true })
      const note: Note = { title, text: body, savedAt: new Date().toISOString() }
      await writeAtomic(noteFile(title), JSON.stringify(note))
      return text(`Saved "${title}".`)
    }
    case "index_notes": {
      const notes = await readNotes()
      const index: Record<string, Array<string>> = {}
      const progressToken = extra._meta?.progressToken
      for (const [done, note] of notes.entries()) {
        // Stops between notes when the node cancels: the index on disk stays the previous complete one.
        if (extra.signal.aborted) return failed("cancelled")
        for (const word of new Set(`${note.title} ${note.text}`.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])) {
          ;(index[word] ??= []).push(note.title)
        }
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: done + 1, total: notes.length }
          })
        }
      }
      await fs.mkdir(dataDir, { recursive: true })
      await writeAtomic(path.join(dataDir, "index.json"), JSON.stringify(index))
      return text(`Indexed ${notes.length} note${notes.length === 1 ? "" : "s"}, ${Object.keys(index).length} words.`)
    }
    default:
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
  }
})

await server.connect(new StdioServerTransport())
