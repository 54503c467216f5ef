/** Ends a run with the plain line `N passed, N failed` (and skipped), which any CI reads. */
import type { Reporter } from "vitest/reporters"

interface Task {
  readonly type: string
  readonly mode?: string
  readonly result?: { readonly state?: string }
  readonly tasks?: ReadonlyArray<Task>
}

const count = (tasks: ReadonlyArray<Task>, counts: { passed: number; failed: number; skipped: number }) => {
  for (const task of tasks) {
    if (task.tasks !== undefined) count(task.tasks, counts)
    if (task.type !== "test") continue
    const state = task.result?.state
    if (state === "pass") counts.passed++
    else if (state === "fail") counts.failed++
    else counts.skipped++
  }
  return counts
}

export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<Task> = []) {
    const { failed, passed, skipped } = count(files, { passed: 0, failed: 0, skipped: 0 })
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}\n`)
  }
}
