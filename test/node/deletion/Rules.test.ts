/** Deletion's pure rules: when a permit can delete, and the sentences read back to the person. */
import { describe, expect, it } from "@effect/vitest"
import { refusalSay, type Unsettled } from "../../../services/node/ConversationActivity.js"
import { askReadBack, deletionStep, doneReadBack, permitProblem, type StoredPermit } from "../../../services/node/Deletions.js"
import { matches } from "../../../services/node/ExecutionPolicy.js"

const permit: StoredPermit = { conversationId: "conv_a", holder: "person", expiresAtMs: 120_000, usedAtMs: null }

describe("permitProblem", () => {
  it.each([
    ["a fresh permit", permit, 0, undefined],
    ["the last millisecond", permit, 119_999, undefined],
    ["at two minutes", permit, 120_000, "expired"],
    ["never issued", undefined, 0, "unknown"],
    ["spent", { ...permit, usedAtMs: 5 }, 10, "used"],
    ["another conversation's", { ...permit, conversationId: "conv_b" }, 0, "other-conversation"],
    ["another holder's", { ...permit, holder: "cli-api" }, 0, "other-person"]
  ] as const)("%s → %s", (_, stored, nowMs, problem) => {
    expect(permitProblem(stored, "conv_a", "person", nowMs)).toBe(problem)
  })
})

describe("the sentences", () => {
  it.each<[ReadonlyArray<Unsettled>, string]>([
    [[{ kind: "turn", id: "c" }], "This conversation can't be deleted yet: a reply is still being written."],
    [
      [{ kind: "unknown-effect", id: "e1" }, { kind: "unknown-effect", id: "e2" }, { kind: "job", id: "j" }],
      "This conversation can't be deleted yet: a job is still running and actions may or may not have happened and need your answers in the inbox."
    ],
    [
      [{ kind: "question", id: "q" }, { kind: "task-approval", id: "a" }, { kind: "widget-action", id: "w" }],
      "This conversation can't be deleted yet: a widget action is still settling, a question is waiting for an answer and a step is waiting for your approval."
    ]
  ])("refusal of %j", (unsettled, say) => {
    expect(refusalSay(unsettled)).toBe(say)
  })

  it("reads back the title and the counts", () => {
    const contents = { title: "Trip", attachments: 1, artifacts: 0, pendingFiles: 2 }
    expect(askReadBack(contents)).toBe("Delete “Trip” with its messages, 1 attachment, 0 files and 2 unfinished files? This cannot be undone.")
    expect(doneReadBack({ ...contents, title: null })).toBe(
      "Deleted this conversation: its messages, 1 attachment, 0 files and 2 unfinished files. Saved memory and the audit log were kept."
    )
  })

  it("a deny rule on destructive steps, or on this tool, covers a deletion; one on a package does not", () => {
    const step = deletionStep({ surface: "person", channel: "text" })
    expect(matches({ risk: "destructive" }, step)).toBe(true)
    expect(matches({ tool: "conversation.delete" }, step)).toBe(true)
    expect(matches({ risk: "destructive", origins: ["cli-api"] }, step)).toBe(false)
    expect(matches({ package: "@clark-examples/notes-service" }, step)).toBe(false)
  })
})
