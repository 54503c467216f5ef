/** What the model (and the timeline) reads of an MCP tool result: bounded, text first. */
import type { ServiceToolResult } from "../../../services/node/ServiceRuntime.js"

/** A tool's answer longer than this is cut: the model reads a prefix and is told so. */
export const maxOutputChars = 20_000

const cut = (text: string) =>
  text.length <= maxOutputChars ? text : `${text.slice(0, maxOutputChars)}… (cut at ${maxOutputChars} characters)`

export const modelOutput = (result: ServiceToolResult): unknown => {
  const parts = result.content.map((block) =>
    block.type === "text" && typeof block.text === "string" ? block.text : `[${block.type} content]`
  )
  const text = cut(parts.join("\n"))
  const structured = result.structuredContent === undefined
    ? {}
    : JSON.stringify(result.structuredContent).length <= maxOutputChars
    ? { structuredContent: result.structuredContent }
    : { structuredContent: { cut: true } }
  return { text, ...structured, ...(result.isError ? { isError: true } : {}) }
}
