/**
 * A package tool call's outcome (PackageTools) as a widget press's answer (spec, press rules 1, 2, 4, 5): what
 * ran is `done` (also a tool that answered with an error: it ran and said so), a waiting approval is 202, and
 * every other outcome is a refusal saying whether the call may have run, whether the ledger recorded it and
 * whether it only read.
 */
import { Either } from "effect"
import type { CallOutcome } from "../../../services/node/PackageTools.js"
import { PressFailed, type PressFailure } from "../../../services/node/WidgetErrors.js"
import type { ActionAnswer } from "../../../services/node/WidgetPresses.js"

const byCode: Record<string, typeof PressFailure.Type> = {
  POLICY_REFUSED: "policy-refused",
  LEDGER_UNAVAILABLE: "ledger-unavailable",
  SERVICE_TIMED_OUT: "service-timed-out",
  SERVICE_CANCELLED: "service-cancelled",
  SERVICE_UNREACHABLE: "service-unreachable",
  SERVICE_TOOL_FAILED: "service-tool-failed",
  RESOURCE_NOT_FOUND: "tool-not-offered",
  INVALID_INPUT: "input-refused"
}

export interface Mapped {
  readonly answer: Either.Either<ActionAnswer, PressFailed>
  /** Whether the press ran, may have run or waits: then the timeline records it and the revision moves. */
  readonly recordsTimeline: boolean
}

export const callOutcome = (
  outcome: CallOutcome,
  press: { readonly taskId: string; readonly invocationId: string; readonly instanceId: string }
): Mapped => {
  const { details } = outcome
  const code = details.code ?? "SERVICE_TOOL_FAILED"
  const step = (status: "done" | "failed" | "uncertain" | "not-run" | "skipped", stepCode?: string) => ({
    step: "call",
    status,
    ...(stepCode === undefined ? {} : { code: stepCode })
  })
  const ledgerStep = details.risk === "read"
    ? { step: "ledger", status: "skipped" as const }
    : { step: "ledger", status: details.effectId === undefined ? "not-run" as const : "done" as const }
  if (outcome.status === "done" || (details.outcome === undefined && details.code === undefined)) {
    return {
      recordsTimeline: true,
      answer: Either.right({
        outcome: "done",
        invocationId: press.invocationId,
        instanceId: press.instanceId,
        revision: 0,
        result: outcome.output,
        taskId: press.taskId,
        workflow: [ledgerStep, step(outcome.status === "done" ? "done" : "failed")]
      })
    }
  }
  if (details.outcome === "approval-required" && details.approvalId !== undefined) {
    return {
      recordsTimeline: true,
      answer: Either.right({
        outcome: "approval-required",
        invocationId: press.invocationId,
        approvalRequired: { approvalId: details.approvalId },
        taskId: press.taskId
      })
    }
  }
  const failure = byCode[code] ?? "service-tool-failed"
  if (details.outcome === "unknown-effect") {
    // Rule 5: went out without a trustworthy answer; the ledger made it an unknown effect the inbox asks about.
    return {
      recordsTimeline: true,
      answer: Either.left(
        new PressFailed({
          failure,
          outcome: "uncertain",
          mayHaveRun: true,
          recorded: true,
          taskId: press.taskId,
          ...(details.effectId === undefined ? {} : { effectId: details.effectId }),
          workflow: [{ step: "ledger", status: "done" }, step("uncertain", code)]
        })
      )
    }
  }
  if (details.outcome === undefined) {
    // A read sent without an answer: nothing was recorded (a read changes nothing), and it only read.
    return {
      recordsTimeline: true,
      answer: Either.left(
        new PressFailed({
          failure,
          outcome: "uncertain",
          mayHaveRun: true,
          recorded: false,
          readOnly: true,
          taskId: press.taskId,
          workflow: [ledgerStep, step("uncertain", code)]
        })
      )
    }
  }
  // Denied or not sent: nothing ran, nothing changed.
  return {
    recordsTimeline: false,
    answer: Either.left(
      new PressFailed({
        failure,
        outcome: "refused",
        mayHaveRun: false,
        recorded: false,
        workflow: details.outcome === "denied"
          ? [{ step: "policy", status: "failed", code }]
          : code === "LEDGER_UNAVAILABLE"
          ? [{ step: "ledger", status: "failed", code }, step("not-run")]
          : [ledgerStep, step("not-run", code)]
      })
    )
  }
}
