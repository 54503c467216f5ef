/**
 * The rules of jobs as pure functions (table tests in test/node/jobs/JobRules.test.ts): who may read a job, how
 * a failed job's error quotes the service, what a job's answer becomes (its output and result files) and what
 * the conversation and the inbox say when it ends.
 */
import type { JobStatus } from "../../schema/node/Job.js"
import { maxJobErrorQuote } from "../../schema/node/Job.js"
import type { ServiceContent, ServiceToolResult } from "./ServiceRuntime.js"
import type { JobViewer } from "./Jobs.js"

/** The stored owner of a job: what the viewer must match. */
export interface JobOwner {
  readonly conversationId: string
  readonly instanceId: string
  readonly packageId: string
  readonly version: string
  readonly tool: string
}

/**
 * A job is answered only to the widget whose own button started it, in the same conversation, under the same
 * package version and capability; anything else (a copied reference too) is as if it did not exist.
 */
export const visibleTo = (job: JobOwner, viewer: JobViewer): boolean =>
  job.conversationId === viewer.conversationId &&
  job.instanceId === viewer.instanceId &&
  job.packageId === viewer.packageId &&
  job.version === viewer.version &&
  viewer.tools.includes(job.tool)

export const ended = (status: JobStatus): boolean => status === "completed" || status === "failed" || status === "cancelled"

export const redactionMarker = "[redacted]"

/**
 * Provider keys a service may echo back: OpenAI and Anthropic (`sk-…`), Google (`AIza…`), GitHub tokens, Slack
 * tokens, AWS access key ids, and any bearer credential.
 */
const providerKeys: ReadonlyArray<RegExp> = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /(?<=\bBearer\s+)[A-Za-z0-9._~+/=-]{12,}/gi
]

/** Control characters (line breaks become a space), format characters (zero-width, bidi) and line separators. */
const whitespaceControls = /[\t\n\r\v\f]+/g
const invisible = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/gu

/**
 * What a failed job's error quotes of the service: control and invisible characters removed, provider keys and
 * the given secrets replaced by the redaction marker (after cleaning, so a key split by an invisible character
 * is still found), then cut at 400 characters.
 */
export const cleanQuote = (text: string, secrets: ReadonlyArray<string> = []): string => {
  let clean = text.replace(whitespaceControls, " ").replace(invisible, "")
  for (const secret of secrets) if (secret.length >= 8) clean = clean.split(secret).join(redactionMarker)
  for (const pattern of providerKeys) clean = clean.replace(pattern, redactionMarker)
  const chars = Array.from(clean.trim())
  return chars.length > maxJobErrorQuote ? chars.slice(0, maxJobErrorQuote).join("") : chars.join("")
}

export type JobFailure =
  | { readonly _tag: "ToolFailed"; readonly said: string }
  | { readonly _tag: "Call"; readonly code: string; readonly reason?: string | undefined }
  | { readonly _tag: "TimedOut" }
  | { readonly _tag: "Interrupted" }
  | { readonly _tag: "Stopped"; readonly by: "cancel" | "emergency-stop" | "shutdown" }

/** A job's error: fixed sentences; only the service's own words are quoted, cleaned. */
export const jobError = (failure: JobFailure, secrets: ReadonlyArray<string> = []): { code: string; message: string } => {
  switch (failure._tag) {
    case "ToolFailed":
      return { code: "SERVICE_TOOL_FAILED", message: `The service reported that the job failed: "${cleanQuote(failure.said, secrets)}"` }
    case "Call":
      return {
        code: failure.code,
        message: `The job's call to the service did not finish (${failure.code.toLowerCase().replace(/_/g, " ")}).`
      }
    case "TimedOut":
      return { code: "JOB_TIMED_OUT", message: "The job ran longer than 30 minutes and was stopped." }
    case "Interrupted":
      return { code: "JOB_INTERRUPTED", message: "The job was cut off by a restart of the node; it is not run again." }
    case "Stopped":
      return {
        code: "JOB_CANCELLED",
        message: failure.by === "cancel"
          ? "The job was cancelled; it may already have had its effect."
          : failure.by === "emergency-stop"
          ? "The job was cancelled by an emergency stop; it may already have had its effect."
          : "The job was cancelled because the node shut down; it may already have had its effect."
      }
  }
}

/** A file a job's answer carries (an embedded MCP resource), to be stored as a conversation artifact. */
export interface ResultFile {
  readonly name: string
  readonly mimeType: string
  readonly bytes: Uint8Array
}

const fileName = (uri: unknown, index: number): string => {
  const tail = typeof uri === "string" ? uri.split(/[/\\]/).pop() ?? "" : ""
  const clean = cleanQuote(decodeURIComponentSafe(tail)).replace(/[^\p{L}\p{N}._ -]/gu, "").slice(0, 120)
  return clean === "" || clean === "." || clean === ".." ? `result-${index + 1}` : clean
}

const decodeURIComponentSafe = (text: string) => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

const fileOf = (block: ServiceContent, index: number): ResultFile | undefined => {
  if (block.type !== "resource" || typeof block.resource !== "object" || block.resource === null) return undefined
  const resource = block.resource as Record<string, unknown>
  const mimeType = typeof resource.mimeType === "string" ? resource.mimeType : "application/octet-stream"
  if (typeof resource.blob === "string") {
    return { name: fileName(resource.uri, index), mimeType, bytes: new Uint8Array(Buffer.from(resource.blob, "base64")) }
  }
  if (typeof resource.text === "string") {
    return { name: fileName(resource.uri, index), mimeType, bytes: new TextEncoder().encode(resource.text) }
  }
  return undefined
}

/** What a job's answer becomes: its output (structured content, else its text) and the files it carries. */
export const answerOf = (result: ServiceToolResult): { readonly output: unknown; readonly files: ReadonlyArray<ResultFile> } => {
  const text = result.content.flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : []))
  const files = result.content.flatMap((block, index) => {
    const file = fileOf(block, index)
    return file === undefined ? [] : [file]
  })
  return { output: result.structuredContent ?? (text.length === 0 ? null : text.join("\n")), files }
}

/** The text of a failed tool's answer, for the quote. */
export const failureText = (result: ServiceToolResult): string =>
  result.content.flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : [])).join(" ")

/** What the conversation and the notice say when a job ends, naming up to three of its result files. */
export const endedSentence = (
  job: { readonly tool: string; readonly status: JobStatus; readonly resultNames: ReadonlyArray<string> }
): string => {
  const verb = job.status === "completed" ? "finished" : job.status === "cancelled" ? "was cancelled" : "failed"
  const names = job.resultNames.slice(0, 3)
  const more = job.resultNames.length - names.length
  const files = names.length === 0
    ? ""
    : ` Result files: ${names.join(", ")}${more > 0 ? ` and ${more} more` : ""}.`
  return `The background job ${job.tool} ${verb}.${files}`
}
