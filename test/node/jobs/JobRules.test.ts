/** The pure rules of jobs: who reads a job, the error quote, what an answer becomes, what the end says. */
import { describe, expect, it } from "vitest"
import { answerOf, cleanQuote, endedSentence, jobError, redactionMarker, visibleTo } from "../../../services/node/JobRules.js"
import { isJobTool } from "../../../services/node/Jobs.js"

const owner = { conversationId: "c1", instanceId: "w1", packageId: "@p/a", version: "1.0.0", tool: "index" }
const viewer = { conversationId: "c1", instanceId: "w1", packageId: "@p/a", version: "1.0.0", tools: ["index", "list"] }

describe("visibleTo", () => {
  it.each([
    ["the widget whose button started it", viewer, true],
    ["another conversation", { ...viewer, conversationId: "c2" }, false],
    ["another widget of the same package", { ...viewer, instanceId: "w2" }, false],
    ["another package version", { ...viewer, version: "1.0.1" }, false],
    ["another package", { ...viewer, packageId: "@p/b" }, false],
    ["a widget whose buttons do not call the capability", { ...viewer, tools: ["list"] }, false]
  ])("%s: %s", (_, who, expected) => {
    expect(visibleTo(owner, who)).toBe(expected)
  })
})

describe("cleanQuote", () => {
  it.each([
    ["plain text stays", "disk full", "disk full"],
    ["line breaks and tabs become spaces", "line one\nline\ttwo\r\n", "line one line two"],
    ["control characters are removed", "a\u0000b\u0007c\u001bd\u007f", "abcd"],
    ["zero-width and bidi characters are removed", "ad\u200bmin\u202e\u2066x\ufeff", "adminx"],
    ["an OpenAI key is redacted", "bad key sk-proj-abcdefghijklmnopqrstuvwx", `bad key ${redactionMarker}`],
    ["an Anthropic key is redacted", "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA rejected", `${redactionMarker} rejected`],
    ["a Google key is redacted", "key=AIzaSyA1234567890abcdefghijklmnopqrstu", `key=${redactionMarker}`],
    ["a GitHub token is redacted", "token ghp_abcdefghijklmnopqrstuvwxyz0123", `token ${redactionMarker}`],
    ["an AWS key id is redacted", "AKIAIOSFODNN7EXAMPLE denied", `${redactionMarker} denied`],
    ["a bearer credential is redacted", "sent Authorization: Bearer abcdef123456789xyz", `sent Authorization: Bearer ${redactionMarker}`],
    ["a key split by an invisible character is still found", "sk-\u200bproj-abcdefghijklmnopqrstuvwx", redactionMarker]
  ])("%s", (_, input, expected) => {
    expect(cleanQuote(input)).toBe(expected)
  })

  it("redacts the given secrets too", () => {
    expect(cleanQuote("the token s3cr3t-value-123 was refused", ["s3cr3t-value-123"])).toBe(`the token ${redactionMarker} was refused`)
  })

  it("cuts at 400 characters, counting characters rather than UTF-16 units", () => {
    expect(cleanQuote("x".repeat(1000))).toHaveLength(400)
    const emoji = cleanQuote("😀".repeat(500))
    expect(Array.from(emoji)).toHaveLength(400)
  })
})

describe("jobError", () => {
  it("quotes the service inside a fixed sentence", () => {
    const error = jobError({ _tag: "ToolFailed", said: "no\u0000 access for sk-abcdefghijklmnopqrstuvwxyz" })
    expect(error).toEqual({ code: "SERVICE_TOOL_FAILED", message: `The service reported that the job failed: "no access for ${redactionMarker}"` })
  })

  it.each([
    [{ _tag: "TimedOut" } as const, "JOB_TIMED_OUT"],
    [{ _tag: "Interrupted" } as const, "JOB_INTERRUPTED"],
    [{ _tag: "Stopped", by: "cancel" } as const, "JOB_CANCELLED"],
    [{ _tag: "Stopped", by: "emergency-stop" } as const, "JOB_CANCELLED"],
    [{ _tag: "Call", code: "SERVICE_UNREACHABLE" } as const, "SERVICE_UNREACHABLE"]
  ])("%o → %s, a sentence of the node's own", (failure, code) => {
    const error = jobError(failure)
    expect(error.code).toBe(code)
    expect(error.message).toMatch(/^The job/)
  })
})

describe("answerOf", () => {
  it("keeps structured content as the output, and embedded resources as files", () => {
    const answer = answerOf({
      isError: false,
      structuredContent: { words: 3 },
      content: [
        { type: "text", text: "Indexed." },
        { type: "resource", resource: { uri: "file:///tmp/../index%20one.json", mimeType: "application/json", text: "{}" } },
        { type: "resource", resource: { uri: "mem://x/", mimeType: "image/png", blob: Buffer.from([1, 2, 3]).toString("base64") } },
        { type: "resource", resource: { uri: "mem://nothing" } }
      ]
    })
    expect(answer.output).toEqual({ words: 3 })
    expect(answer.files.map((f) => [f.name, f.mimeType, Array.from(f.bytes)])).toEqual([
      ["index one.json", "application/json", [123, 125]],
      ["result-3", "image/png", [1, 2, 3]]
    ])
  })

  it("answers the text when there is no structured content", () => {
    expect(answerOf({ isError: false, content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }).output).toBe("a\nb")
  })
})

describe("endedSentence", () => {
  it.each([
    [{ tool: "index", status: "completed" as const, resultNames: [] }, "The background job index finished."],
    [{ tool: "index", status: "failed" as const, resultNames: [] }, "The background job index failed."],
    [{ tool: "index", status: "cancelled" as const, resultNames: [] }, "The background job index was cancelled."],
    [
      { tool: "index", status: "completed" as const, resultNames: ["a.csv", "b.csv", "c.csv", "d.csv", "e.csv"] },
      "The background job index finished. Result files: a.csv, b.csv, c.csv and 2 more."
    ]
  ])("%o", (job, expected) => {
    expect(endedSentence(job)).toBe(expected)
  })
})

describe("isJobTool", () => {
  it.each([
    [{ execution: { kind: "job", version: 1 } }, true],
    [{ execution: { kind: "job", version: 2 } }, false],
    [{}, false]
  ])("%o → %s", (tool, expected) => {
    expect(isJobTool(tool)).toBe(expected)
  })
})
