/** What the client commands share for printing: response bodies as text, single lines, tables. */
import type { HttpClientResponse } from "@effect/platform"
import { Effect } from "effect"

/**
 * The body of a response as text. The typed client decodes from the cached
 * `arrayBuffer`, so reading it the same way again gives the very bytes it decoded.
 */
export const bodyText = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.arrayBuffer, (buffer) => new TextDecoder().decode(buffer))

/** One line at most `max` characters long: control characters become spaces, the cut shows as `…`. */
export const clip = (text: string, max: number) => {
  const flat = Array.from(text, (c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? " " : c)).join("").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** Columns padded to their widest cell, two spaces apart. */
export const table = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}
