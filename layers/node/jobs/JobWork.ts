/**
 * Jobs in GET /work and POST /work/{id}/cancel (spec, "Long-running package jobs"): the activity's work list and
 * background work's cancel, each wrapped so a job's id reaches the jobs and every other id the turns' own
 * implementation, unchanged. Provided over the inbox's layers in src/node/Server.ts.
 */
import { Effect, Layer, Option } from "effect"
import { Activity } from "../../../services/node/Activity.js"
import { BackgroundWork } from "../../../services/node/BackgroundWork.js"
import { WorkNotFound, WorkNotRunning } from "../../../services/node/InboxErrors.js"
import { Jobs } from "../../../services/node/Jobs.js"

export const isJobId = (workId: string) => workId.startsWith("job_")

export const activity = Layer.effect(
  Activity,
  Effect.gen(function*() {
    const turns = yield* Activity
    const jobs = yield* Jobs
    return Activity.of({
      activity: turns.activity,
      work: (query) =>
        Effect.map(Effect.all([turns.work(query), jobs.work(query)]), ([a, b]) =>
          [...a, ...b].sort((x, y) => y.createdAt.localeCompare(x.createdAt)).slice(0, query.limit)),
      workItem: (workId) =>
        isJobId(workId)
          ? Effect.map(jobs.work({ workId, limit: 1 }), (items) => Option.fromNullable(items[0]))
          : turns.workItem(workId)
    })
  })
)

export const backgroundWork = Layer.effect(
  BackgroundWork,
  Effect.gen(function*() {
    const turns = yield* BackgroundWork
    const jobs = yield* Jobs
    return BackgroundWork.of({
      retry: turns.retry,
      cancel: (workId, caller) =>
        isJobId(workId)
          ? jobs.cancelWork(workId).pipe(
            Effect.catchTags({
              JobNotFound: () => new WorkNotFound({ workId }),
              JobNotRunning: (e) => new WorkNotRunning({ workId, status: e.status })
            })
          )
          : turns.cancel(workId, caller)
    })
  })
)

/** Both wrappers, over the jobs and the turns' own activity and background work. */
export const layer = Layer.merge(activity, backgroundWork)
