/** What the model (and the timeline) reads of an MCP tool result: bounded, text first. */
import type { ServiceToolResult } from "../../../services/node/ServiceRuntime.js"

/** A tool's answer longer than this is cut: the model reads a prefix and is told so. */
export const maxOutputChars = 20_000

const cut = (text: string) =>
  text.length <= maxOutputChars ? text : `${text.slice(0, maxOutputChars)}… (cut at ${maxOutputChars} characters)`

export const modelOutput = (result: ServiceToolResult): unknown => {
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent)
    return json.length <= maxOutputChars ? result.structuredContent : { text: cut(json) }
  }
  const parts = result.content.map((block) =>
    block.type === "text" && typeof block.text === "string" ? block.text : `[${block.type} content]`
  )
  return { text: cut(parts.join("\n")), ...(result.isError ? { isError: true } : {}) }
}
