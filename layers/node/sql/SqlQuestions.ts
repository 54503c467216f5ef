/**
 * The questions and host-controls of the node's ConversationStore on SQLite: the turn tools' rows and their
 * transitions, each a conditional write.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type {
  ConversationStore,
  HostControl,
  Question,
  QuestionPrompt,
  QuestionStatus
} from "../../../services/node/ConversationStore.js"
import { type Row, str, strOrNull } from "./Columns.js"

const toQuestion = (row: Row): Question => ({
  id: str(row.id),
  conversationId: str(row.conversationId),
  messageId: str(row.messageId),
  taskId: str(row.taskId),
  prompt: JSON.parse(str(row.prompt)) as QuestionPrompt,
  status: str(row.status) as QuestionStatus,
  expiresAt: str(row.expiresAt),
  askedAgainAs: strOrNull(row.askedAgainAs)
})

type Store = ConversationStore["Type"]

export const make = (sql: SqlClient.SqlClient, now: Effect.Effect<string>) => {
  const insertQuestion: Store["insertQuestion"] = (question) =>
    Effect.gen(function*() {
      const at = yield* now
      yield* sql`INSERT INTO questions ${
        sql.insert({
          id: question.id,
          conversationId: question.conversationId,
          messageId: question.messageId,
          taskId: question.taskId,
          prompt: JSON.stringify(question.prompt),
          status: question.status,
          expiresAt: question.expiresAt,
          askedAgainAs: question.askedAgainAs,
          createdAt: at,
          updatedAt: at
        })
      }`
    }).pipe(Effect.orDie)

  const question: Store["question"] = (id) =>
    sql<Row>`SELECT * FROM questions WHERE id = ${id}`.pipe(
      Effect.map(([row]) => Option.map(Option.fromNullable(row), toQuestion)),
      Effect.orDie
    )

  const transitionQuestion: Store["transitionQuestion"] = (id, from, patch) =>
    Effect.gen(function*() {
      const at = yield* now
      const rows = yield* sql<Row>`UPDATE questions SET status = ${patch.status}, asked_again_as = COALESCE(${
        patch.askedAgainAs ?? null
      }, asked_again_as), updated_at = ${at} WHERE id = ${id} AND ${sql.in("status", from)} RETURNING id`
      return rows.length === 1
    }).pipe(Effect.orDie)

  const openQuestions: Store["openQuestions"] = sql<Row>`SELECT * FROM questions
    WHERE status = 'open' ORDER BY expires_at`.pipe(Effect.map((rows) => rows.map(toQuestion)), Effect.orDie)

  const insertHostControl: Store["insertHostControl"] = (control) =>
    Effect.gen(function*() {
      const at = yield* now
      yield* sql`INSERT INTO host_controls ${
        sql.insert({
          id: control.id,
          conversationId: control.conversationId,
          taskId: control.taskId,
          action: JSON.stringify(control.action),
          status: control.status,
          say: null,
          createdAt: at,
          answeredAt: null
        })
      }`
    }).pipe(Effect.orDie)

  const hostControl: Store["hostControl"] = (id) =>
    sql<Row>`SELECT * FROM host_controls WHERE id = ${id}`.pipe(
      Effect.map(([row]) =>
        Option.map(Option.fromNullable(row), (row) => ({
          id: str(row.id),
          conversationId: str(row.conversationId),
          taskId: str(row.taskId),
          action: JSON.parse(str(row.action)) as Record<string, unknown>,
          status: str(row.status) as HostControl["status"],
          answered: row.answeredAt !== null && row.answeredAt !== undefined
        }))
      ),
      Effect.orDie
    )

  const answerHostControl: Store["answerHostControl"] = (id, ran, say) =>
    Effect.gen(function*() {
      const at = yield* now
      const rows = yield* sql<Row>`UPDATE host_controls SET status = ${ran ? "ran" : "not-run"}, say = ${say},
        answered_at = ${at} WHERE id = ${id} AND answered_at IS NULL RETURNING id`
      return rows.length === 1
    }).pipe(Effect.orDie)

  const settleHostControl: Store["settleHostControl"] = (id, status) =>
    sql`UPDATE host_controls SET status = ${status} WHERE id = ${id} AND answered_at IS NULL`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  return {
    insertQuestion,
    question,
    transitionQuestion,
    openQuestions,
    insertHostControl,
    hostControl,
    answerHostControl,
    settleHostControl
  } satisfies Partial<Store>
}
