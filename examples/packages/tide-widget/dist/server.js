/**
 * The tide widget's service: an MCP server over stdio (one JSON-RPC message per line) offering the one tool its
 * package.json declares, `tide_table`, with the schema declared there. Written by hand without dependencies (a
 * package in the node's cache has no node_modules, and this protocol needs none).
 *
 * The table is illustrative, not tide data: high and low water follow a plain semi-diurnal model (every 12 h 25
 * min, phase from the harbour's name), so the example works offline. A real package would ask the host its
 * manifest names (`tides.example.org`).
 */
import { readFileSync } from "node:fs"
import { createInterface } from "node:readline"

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
const tools = pkg.clark.tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }))

const period = (12 * 60 + 25) * 60_000
/** The first high water after midnight (UTC), from the harbour's name: the same harbour, the same times. */
const phaseOf = (harbour) => [...harbour].reduce((h, ch) => (h * 31 + ch.codePointAt(0)) % (period / 2), 7)

const table = (harbour, days) => {
  const now = new Date()
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  const rows = []
  for (let k = 0, at = start + phaseOf(harbour); at < start + days * 86_400_000; k++, at += period / 2) {
    const high = k % 2 === 0
    rows.push({ time: `${new Date(at).toISOString().slice(0, 16)}Z`, tide: high ? "high" : "low", heightM: high ? 1.8 : 0.4 })
  }
  return { harbour, days, note: "Illustrative times from a simple model, not tide data.", rows }
}

const call = (name, input) => {
  if (name !== "tide_table") return { content: [{ type: "text", text: `No tool ${name}` }], isError: true }
  const harbour = typeof input?.harbour === "string" ? input.harbour.slice(0, 100) : ""
  const days = Number.isInteger(input?.days) && input.days >= 1 && input.days <= 7 ? input.days : 1
  if (harbour === "") return { content: [{ type: "text", text: "harbour is required" }], isError: true }
  return { content: [{ type: "text", text: JSON.stringify(table(harbour, days)) }] }
}

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`)

const answer = (request) => {
  switch (request.method) {
    case "initialize":
      return {
        protocolVersion: request.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: pkg.name, version: pkg.version }
      }
    case "ping":
      return {}
    case "tools/list":
      return { tools }
    case "tools/call":
      return call(request.params?.name, request.params?.arguments)
    default:
      return undefined
  }
}

createInterface({ input: process.stdin }).on("line", (line) => {
  let request
  try {
    request = JSON.parse(line)
  } catch {
    return send({ id: null, error: { code: -32700, message: "Parse error" } })
  }
  // Notifications (no id) need no answer.
  if (request === null || typeof request !== "object" || request.id === undefined) return
  const result = answer(request)
  if (result === undefined) send({ id: request.id, error: { code: -32601, message: `Method not found: ${request.method}` } })
  else send({ id: request.id, result })
})
