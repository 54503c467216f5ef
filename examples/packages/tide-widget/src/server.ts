/**
 * The tide widget's service: an MCP server over stdio whose tools are the ones its package.json declares, with the
 * JSON Schemas declared there. It answers from a fixed table (the example never reaches the network): `tide_table`
 * reads the next days' tides of a harbour, `tide_report` runs as a background job (`execution: {kind: job}`) and
 * hands back its result as a CSV file (an embedded resource the node stores as a conversation artifact).
 *
 * Built by scripts/build-examples.mjs into one file, dist/server.js, because a package in the node's cache has no
 * node_modules.
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
import pkg from "../package.json" with { type: "json" }

interface Tide {
  readonly day: number
  readonly time: string
  readonly height: number
  readonly kind: "high" | "low"
}

/** Two highs and two lows a day, the same every day, shifted by harbour: fixed data, not a forecast. */
const harbours: Record<string, number> = { kiel: 0, aarhus: 35, bremen: 70 }

const tidesOf = (harbour: string, days: number): ReadonlyArray<Tide> => {
  const shift = harbours[harbour.toLowerCase()] ?? 0
  const base: ReadonlyArray<readonly [number, number, "high" | "low"]> = [
    [47, 1.8, "high"],
    [6 * 60 + 10, 0.4, "low"],
    [12 * 60 + 22, 1.9, "high"],
    [18 * 60 + 35, 0.5, "low"]
  ]
  const rows: Array<Tide> = []
  for (let day = 1; day <= days; day++) {
    const today = base.map(([minutes, height, kind]) => ({ at: (minutes + shift + (day - 1) * 50) % (24 * 60), height, kind }))
    for (const { at, height, kind } of today.sort((a, b) => a.at - b.at)) {
      const time = `${String(Math.floor(at / 60)).padStart(2, "0")}:${String(at % 60).padStart(2, "0")}`
      rows.push({ day, time, height, kind })
    }
  }
  return rows
}

const failed = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }], isError: true })

/** The input as the manifest's schema allows it, or why not (the node checks too; this is the service's own check). */
const readInput = (input: Record<string, unknown>, maxDays: number) => {
  const harbour = input.harbour
  const days = input.days === undefined ? 1 : input.days
  if (typeof harbour !== "string" || harbour.trim() === "" || harbour.length > 100) {
    return "harbour must be a non-empty text of at most 100 characters"
  }
  if (typeof days !== "number" || !Number.isInteger(days) || days < 1 || days > maxDays) {
    return `days must be a whole number from 1 to ${maxDays}`
  }
  return { harbour: harbour.trim(), days }
}

/** A CSV cell: quoted when it holds a comma, a quote or a line break. */
const cell = (value: string | number) => {
  const text = String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
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
    case "tide_table": {
      const read = readInput(input, 7)
      if (typeof read === "string") return failed(read)
      const rows = tidesOf(read.harbour, read.days)
      return {
        content: [{ type: "text", text: rows.map((r) => `day ${r.day} ${r.time} ${r.kind} ${r.height} m`).join("\n") }],
        structuredContent: { harbour: read.harbour, rows }
      }
    }
    case "tide_report": {
      const read = readInput(input, 7)
      if (typeof read === "string") return failed(read)
      const rows = tidesOf(read.harbour, read.days)
      const progressToken = extra._meta?.progressToken
      const lines = ["day,time,height,kind"]
      for (const [done, row] of rows.entries()) {
        // Stops between rows when the node cancels: no half report is handed back.
        if (extra.signal.aborted) return failed("cancelled")
        lines.push([row.day, row.time, row.height, row.kind].map(cell).join(","))
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: done + 1, total: rows.length }
          })
        }
      }
      const name = `tides-${read.harbour.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.csv`
      return {
        content: [
          { type: "text", text: `A report of ${rows.length} tides at ${read.harbour}.` },
          { type: "resource", resource: { uri: `tide-report:///${name}`, mimeType: "text/csv", text: `${lines.join("\r\n")}\r\n` } }
        ],
        structuredContent: { harbour: read.harbour, tides: rows.length, file: name }
      }
    }
    default:
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
  }
})

await server.connect(new StdioServerTransport())
