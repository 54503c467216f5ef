/**
 * What the node did and what it is doing, read back for GET /activity (the audit log, newest first) and GET /work
 * (the turns' tasks with their origin and state). Read-only views over the stores; the rules that name a task's
 * state and an activity row's summary are pure functions here.
 */
import { Context, type Effect, type Option } from "effect"
import type { ActivityRow, WorkItem } from "../../schema/node/Work.js"
import type { JobStatus } from "../../schema/node/Job.js"

export interface ActivityQuery {
  readonly limit: number
  /** The `nextCursor` of the previous page. */
  readonly before?: string | undefined
}

export interface WorkQuery {
  readonly limit: number
  readonly conversationId?: string | undefined
}

export class Activity extends Context.Tag("clark/node/Activity")<Activity, {
  readonly activity: (query: ActivityQuery) => Effect.Effect<{
    readonly activity: ReadonlyArray<ActivityRow>
    readonly nextCursor: string | null
  }>
  readonly work: (query: WorkQuery) => Effect.Effect<ReadonlyArray<WorkItem>>
  /** One work item by its id, as GET /work lists it. */
  readonly workItem: (workId: string) => Effect.Effect<Option.Option<WorkItem>>
}>() {}

/** A task as its messages leave it: the status of its reply, or of its message while it has none. */
export interface TaskRow {
  readonly replyStatus: string | null
  readonly messageStatus: string
  readonly approvalWaiting: string | null
  readonly unknownEffect: string | null
}

/**
 * A task's state: waiting while the person has something to decide about it (a risky step, an unknown effect),
 * otherwise what became of its turn.
 */
export const taskStatus = (task: TaskRow): JobStatus => {
  if (task.approvalWaiting !== null || task.unknownEffect !== null) return "waiting"
  switch (task.replyStatus ?? task.messageStatus) {
    case "writing":
      return "running"
    case "complete":
      return "completed"
    case "failed":
      return "failed"
    case "stopped":
    case "cancelled":
      return "cancelled"
    default:
      return "queued"
  }
}

/** A line for people; details stay in the audit log. */
export const summaryOf = (kind: string, detail: Readonly<Record<string, unknown>>): string => {
  const text = (key: string) => (typeof detail[key] === "string" ? (detail[key] as string) : undefined)
  const subject = text("packageId") !== undefined && text("tool") !== undefined
    ? `${text("packageId")} · ${text("tool")}`
    : undefined
  switch (kind) {
    case "message":
      return "A message started or joined a task"
    case "stop":
      return "Stopped a conversation"
    case "emergency-stop":
      return "Emergency stop"
    case "tool-call":
      return `Tool call ${subject ?? ""}`.trim()
    case "tool-denied":
      return `A deny rule refused ${subject ?? "a step"}`
    case "task-approval-asked":
      return `Asked the person before ${subject ?? "a step"}`
    case "task-approval-decided":
      return `The person decided on ${subject ?? "a step"}`
    case "effect-reconciled":
      return "The person answered whether an effect took place"
    default:
      return kind.replaceAll("-", " ")
  }
}
