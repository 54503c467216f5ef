/**
 * A widget press's answers as values (layers/node/widgets/Presses.ts): the outcome of a press, what it writes once
 * its call was made, a stored answer answered again, and the stored form of an answer.
 */
import { Effect, Either, Option, Schema } from "effect"
import type { AuditEntry } from "../../../services/node/AuditLog.js"
import { PressFailed, PressInterrupted, type WidgetError } from "../../../services/node/WidgetErrors.js"
import type { PressRecord, StoredAnswer } from "../../../services/node/WidgetPressLog.js"
import type { ActionAnswer, PressAnswer } from "../../../services/node/WidgetPresses.js"

export type Outcome = Either.Either<ActionAnswer, PressFailed>

/**
 * What a press does once its call was made (or its turn or job started): the writes that record it (timeline row,
 * revision), run in the same transaction as the stored answer and the audit row, answering the press's outcome;
 * and the audit row its call left to it (a package tool call's, `CallContext.auditByCaller`), written with the
 * press's own row in one statement.
 */
export interface Settle {
  readonly write: Effect.Effect<Outcome>
  readonly audit?: AuditEntry | undefined
}

export const settled = (outcome: Outcome): Settle => ({ write: Effect.succeed(outcome) })

const decodeFailed = Schema.decodeUnknownOption(PressFailed)

/** A stored answer, answered again as it was. */
export const replay = (record: PressRecord, invocationId: string): Effect.Effect<PressAnswer, WidgetError> => {
  switch (record.status) {
    case "answered":
      if (record.answer._tag === "Success") return Effect.succeed(record.answer.body as PressAnswer)
      return Option.match(decodeFailed(record.answer.refusal), {
        onNone: () => Effect.dieMessage("a stored press refusal cannot be read"),
        onSome: Effect.fail
      })
    case "interrupted":
    case "running":
      // A running row with no press of this process behind it was cut off by a restart the start-up missed.
      return Effect.fail(new PressInterrupted({ invocationId }))
  }
}

/** A job press refused before anything started: nothing ran, nothing was recorded. */
export const notStarted = (
  failure: "policy-refused" | "job-unavailable",
  step: { readonly step: string; readonly status: "failed" | "not-run"; readonly code: string }
): Outcome => Either.left(new PressFailed({ failure, outcome: "refused", mayHaveRun: false, recorded: false, workflow: [step] }))

export const stored = (outcome: Outcome): StoredAnswer =>
  Either.match(outcome, {
    onLeft: (failed) => ({ _tag: "Refusal", refusal: Schema.encodeSync(PressFailed)(failed) }),
    onRight: (body) => ({ _tag: "Success", status: "approvalRequired" in body || body.outcome === "background" ? 202 : 200, body })
  })
