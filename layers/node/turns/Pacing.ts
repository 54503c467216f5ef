/**
 * Where a turn's fiber runs its steps. Until its first event a turn is part of a start, and runs as any fiber
 * does (Effect's default scheduler, in microtasks). After it, its steps (later deltas, tool calls, the end and
 * its checkpoint) go through one queue shared by all turns, run about a millisecond at a time, with the event
 * loop's I/O in between: Node accepts about one new connection per turn of its event loop, so when every ready
 * step of every running turn ran before the next accept, a burst of starts waited for all the streams already
 * started to write their next events first (docs/decisions.md, "The burst of starts: a turn's later steps yield
 * to new starts").
 */
import { Scheduler } from "effect"

type Task = () => void

/** Main-thread time the turns' later steps take between two polls for I/O. */
export const sliceMs = 1
/**
 * How long the turns' later steps wait, at most, while new starts keep arriving (one per turn of the event loop)
 * before they take a slice again: a burst's starts go first, and a steady flood of them cannot hold a running
 * turn for longer than this per slice.
 */
export const maxYieldMs = 50

/**
 * A scheduler that runs its tasks in order, in slices of about `sliceMs` of the main thread each, and lets
 * Node's event loop poll for I/O (new connections, requests, stops) between slices (`setImmediate`). Within a
 * slice each task's microtasks (the followers it woke, writing its event to their sockets) run before the next
 * task, so an event leaves as soon as its turn produced it. `arrivals` counts the starts that arrived so far:
 * while it moves from one slice to the next, slices wait (up to `maxYieldMs`). While `draining` (an emergency stop
 * or shutdown ending every turn) the queue runs without slices and new steps go to the default scheduler.
 */
export const makeSliced = (
  sliceMs: number,
  arrivals: () => number = () => 0,
  draining: () => boolean = () => false
): Scheduler.Scheduler => {
  const queue: Array<Task> = []
  let head = 0
  let pumping = false
  let sliceStart = 0
  let seen = arrivals()
  let yieldingSince: number | undefined
  const next = (): void => {
    if (head === queue.length) {
      queue.length = 0
      head = 0
      pumping = false
      return
    }
    // While every turn is being stopped, the queue runs to its end: the stop's answer and every stream's `done`
    // wait for all the ending turns, so spreading their steps over many turns of the event loop only delays them.
    if (!draining() && performance.now() - sliceStart >= sliceMs) {
      setImmediate(slice)
      return
    }
    const task = queue[head]!
    queue[head++] = undefined as unknown as Task
    try {
      task()
    } finally {
      // Queued after the microtasks the task queued: the followers it woke write before the next step runs.
      queueMicrotask(next)
    }
  }
  const slice = () => {
    const now = performance.now()
    const latest = arrivals()
    if (latest !== seen && !draining()) {
      // Starts arrived since the last look: Node reads about one new connection per turn of its loop, so the
      // next turn's poll goes first, as long as starts keep coming and for at most `maxYieldMs`.
      seen = latest
      yieldingSince ??= now
      if (now - yieldingSince < maxYieldMs) {
        setImmediate(slice)
        return
      }
    }
    yieldingSince = undefined
    sliceStart = now
    next()
  }
  return Scheduler.make((task, priority, fiber) => {
    // Nothing queued and no start arrived since the last slice looked: nothing waits for the event loop's poll,
    // so the step runs as any fiber's does (a lone turn's deltas take no `setImmediate` hop).
    if (!pumping && (arrivals() === seen || draining())) return Scheduler.defaultScheduler.scheduleTask(task, priority, fiber)
    queue.push(task)
    if (!pumping) {
      pumping = true
      setImmediate(slice)
    }
  })
}

/** A turn's scheduler: the default one until `started()` says its first event went out, then `after`. */
export const turnScheduler = (started: () => boolean, after: Scheduler.Scheduler): Scheduler.Scheduler =>
  Scheduler.make(
    (task, priority, fiber) =>
      started() ? after.scheduleTask(task, priority, fiber) : Scheduler.defaultScheduler.scheduleTask(task, priority, fiber),
    (fiber) => (started() ? after.shouldYield(fiber) : Scheduler.defaultScheduler.shouldYield(fiber))
  )
