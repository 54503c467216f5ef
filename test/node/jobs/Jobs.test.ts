/**
 * Package jobs on the real node, with the probe service package installed from a local folder and run over MCP in
 * its own process: a job started from a widget's button, read, listed and cancelled through the widget routes,
 * seen in GET /work, told to the conversation and the inbox when it ends; the 30-minute bound on the test clock;
 * a conversation's Stop, emergency stop, shutdown and restart.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Scope, TestClock } from "effect"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import * as path from "node:path"
import { conversation, Database, eventually, query, timeline, typedClient, wire } from "../../support/NodeFixtures.js"
import { install } from "../tools/Fixtures.js"
import { cancelJob, getJob, jobProbe, jobsService, jobUntil, listJobs, place, probeId, start, whereOf } from "./Fixtures.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>, dataDir?: string) =>
  Effect.provide(effect, NodeServer.layer({ model: "none", ...(dataDir === undefined ? {} : { dataDir }) }))

const notices = (dataDir: string, jobId: string) =>
  query(dataDir, "SELECT kind, conversation_id, source, data FROM notices WHERE subject_id = ?", jobId).map((row) => ({
    ...row,
    data: JSON.parse(row.data)
  }))

describe("package jobs", () => {
  it.scoped("answers a job_ reference at once, runs the call in the background and tells the conversation and the inbox when it ends", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(jobProbe())
      const id = yield* conversation
      const widget = yield* place(id)
      const started = yield* start(widget, "progress", { steps: 2 })
      expect(started).toMatchObject({ status: "queued", resultRefs: [] })
      expect(started.jobId).toMatch(/^job_/)
      const done = yield* jobUntil(widget, started.jobId, "completed")
      expect(done).toMatchObject({ jobId: started.jobId, status: "completed", output: "2 steps", resultRefs: [] })
      expect(done.startedAt).toEqual(expect.any(String))
      expect(done.endedAt).toEqual(expect.any(String))
      expect(done.error).toBeUndefined()

      const listed = yield* listJobs(whereOf(widget))
      expect(listed).toEqual({ status: 200, body: { jobs: [done] } })
      // The conversation says so, in a host-written message.
      const said = (yield* timeline(id)).filter((entry: any) => entry.hostWritten?.kind === "job-ended")
      expect(said).toHaveLength(1)
      expect(said[0].blocks).toEqual([{ type: "text", text: "The background job progress finished." }])
      // And the inbox, once, with the capability as its source (suppress silences it).
      expect(notices(node.dataDir, started.jobId)).toEqual([{
        kind: "job-ended",
        conversation_id: id,
        source: `job:${probeId}/progress`,
        data: expect.objectContaining({ jobId: started.jobId, status: "completed", tool: "progress", resultFiles: [] })
      }])
      // GET /work lists it for machine clients too: the job and its refs, no bytes.
      const work = yield* Effect.flatMap(typedClient("cli-api"), (client) => Effect.orDie(client.work.list({ urlParams: {} })))
      expect(work.work.find((item) => item.workId === started.jobId)).toMatchObject({
        kind: "job",
        status: "completed",
        conversationId: id,
        origin: "person",
        title: "probe-service · progress",
        job: done
      })
      expect(yield* Effect.flatMap(jobsService, (jobs) => jobs.runningIn(id))).toBe(false)
    })))

  it.scoped("runs index_notes of the example notes service as a job to completion", () =>
    withNode(Effect.gen(function*() {
      const packageId = yield* install(path.resolve("examples/packages/notes-service"))
      const id = yield* conversation
      const node = yield* TestNode
      const widget = yield* Context.get(node.services, WidgetInstances).place({
        conversationId: id,
        packageId,
        version: "1.0.0",
        contentDigest: "sha256:test",
        widgetId: "notes-panel",
        props: {},
        bindings: [{ id: "reindex", kind: "tool", tool: "index_notes", perMinute: 2 }],
        offeredActions: [],
        taskId: null
      })
      const job = yield* start(widget, "index_notes")
      expect(yield* jobUntil(widget, job.jobId, "completed")).toMatchObject({ output: "Indexed 0 notes, 0 words." })
      // A tool of the same package that is not a job capability is not started as one.
      expect(yield* Effect.flip(start(widget, "list_notes"))).toMatchObject({ _tag: "JobUnavailable", reason: "not-a-job" })
    })))

  it.scoped("answers a job only to the widget whose button started it, in its conversation, package version and capability", () =>
    withNode(Effect.gen(function*() {
      yield* install(jobProbe())
      const id = yield* conversation
      const other = yield* conversation
      const widget = yield* place(id)
      const job = yield* start(widget, "slow", { millis: 600_000 })
      const where = whereOf(widget)
      expect((yield* getJob(where, job.jobId)).status).toBe(200)

      const notFound = { status: 404, body: expect.objectContaining({ code: "JOB_NOT_FOUND" }) }
      const sibling = yield* place(id)
      const olderVersion = yield* place(id, { version: "0.9.0" })
      const otherButtons = yield* place(id, { tools: ["fail"] })
      for (const asker of [sibling, olderVersion, otherButtons]) {
        expect(yield* getJob(whereOf(asker), job.jobId)).toEqual(notFound)
        expect(yield* cancelJob(whereOf(asker), job.jobId)).toEqual(notFound)
        expect(yield* listJobs(whereOf(asker))).toEqual({ status: 200, body: { jobs: [] } })
      }
      // The same widget named under another conversation is not there at all.
      expect(yield* getJob({ id: other, instanceId: widget.instanceId }, job.jobId)).toEqual({
        status: 404,
        body: expect.objectContaining({ code: "INSTANCE_UNKNOWN" })
      })
      expect(yield* getJob(where, "job_copiedOrMadeUp")).toEqual(notFound)
      // Nothing the others did touched it.
      expect((yield* getJob(where, job.jobId)).body.job.status).toMatch(/queued|running/)
      expect(yield* Effect.flatMap(jobsService, (jobs) => jobs.runningIn(id))).toBe(true)
      expect(yield* Effect.flatMap(jobsService, (jobs) => jobs.runningIn(other))).toBe(false)
    })))

  it.scoped("cancels a running job with 202 {accepted, jobId}, then answers 409 JOB_NOT_RUNNING and keeps it readable", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(jobProbe())
      const id = yield* conversation
      const widget = yield* place(id)
      const job = yield* start(widget, "slow", { millis: 600_000 })
      // Progress is what the service reported (the probe reports 0 of 1 at once).
      const running = yield* eventually(getJob(whereOf(widget), job.jobId), (r) => r.body.job.progress !== undefined, "progress", 3000)
      expect(running.body.job).toMatchObject({ status: "running", progress: { progress: 0, total: 1 } })

      expect(yield* cancelJob(whereOf(widget), job.jobId)).toEqual({ status: 202, body: { accepted: true, jobId: job.jobId } })
      const cancelled = (yield* getJob(whereOf(widget), job.jobId)).body.job
      expect(cancelled).toMatchObject({ status: "cancelled", error: { code: "JOB_CANCELLED" } })
      expect(yield* cancelJob(whereOf(widget), job.jobId)).toEqual({
        status: 409,
        body: expect.objectContaining({ code: "JOB_NOT_RUNNING" })
      })
      expect((yield* getJob(whereOf(widget), job.jobId)).body.job).toEqual(cancelled)
      expect(notices(node.dataDir, job.jobId).map((n) => n.data.status)).toEqual(["cancelled"])
    })))

  it.scoped("ends a job that runs 30 minutes as failed (test clock), and quotes a failing service in a fixed sentence", () =>
    withNode(Effect.gen(function*() {
      yield* install(jobProbe())
      const id = yield* conversation
      const widget = yield* place(id)
      const job = yield* start(widget, "slow", { millis: 600_000 })
      // The call has reached the service once it reported progress (its start-up runs on the same clock).
      yield* eventually(getJob(whereOf(widget), job.jobId), (r) => r.body.job.progress !== undefined, "progress", 3000)
      yield* TestClock.adjust(Duration.minutes(29))
      expect((yield* getJob(whereOf(widget), job.jobId)).body.job).toMatchObject({ status: "running" })
      yield* TestClock.adjust(Duration.minutes(1))
      expect(yield* jobUntil(widget, job.jobId, "failed")).toMatchObject({
        error: { code: "JOB_TIMED_OUT", message: "The job ran longer than 30 minutes and was stopped." }
      })

      const soft = yield* start(widget, "fail", { soft: true })
      expect(yield* jobUntil(widget, soft.jobId, "failed")).toMatchObject({
        error: { code: "SERVICE_TOOL_FAILED", message: "The service reported that the job failed: \"the tool says no\"" }
      })
      const hard = yield* start(widget, "fail", {})
      const failed = yield* jobUntil(widget, hard.jobId, "failed")
      expect(failed.error?.code).toBe("SERVICE_TOOL_FAILED")
      // The protocol error's own text is not quoted: only a tool's reported failure is.
      expect(failed.error?.message).not.toContain("on purpose")
    })))

  it.scoped("keeps a job running through a conversation's Stop; emergency stop cancels it and counts it in stopped.jobs", () =>
    withNode(Effect.gen(function*() {
      yield* install(jobProbe())
      const id = yield* conversation
      const widget = yield* place(id)
      const job = yield* start(widget, "slow", { millis: 600_000 })
      yield* jobUntil(widget, job.jobId, "running")
      const client = yield* typedClient()
      yield* Effect.orDie(client.conversations.stop({ path: { id }, payload: {} }))
      expect((yield* getJob(whereOf(widget), job.jobId)).body.job.status).toBe("running")

      const stopped = yield* Effect.orDie(client.conversations.emergencyStop())
      expect(stopped.stopped.jobs).toBe(1)
      expect((yield* getJob(whereOf(widget), job.jobId)).body.job).toMatchObject({
        status: "cancelled",
        error: { code: "JOB_CANCELLED", message: expect.stringContaining("emergency stop") }
      })
    })))

  it.scoped("cancels a job through POST /work/{id}/cancel, once", () =>
    withNode(Effect.gen(function*() {
      yield* install(jobProbe())
      const id = yield* conversation
      const widget = yield* place(id)
      const job = yield* start(widget, "slow", { millis: 600_000 })
      const client = yield* typedClient()
      const first = yield* Effect.orDie(wire(client.work.cancel({ path: { id: job.jobId }, withResponse: true })))
      expect(first).toEqual({ status: 202, body: { accepted: true, workId: job.jobId } })
      expect((yield* getJob(whereOf(widget), job.jobId)).body.job.status).toBe("cancelled")
      const again = yield* Effect.orDie(wire(client.work.cancel({ path: { id: job.jobId }, withResponse: true })))
      expect(again).toMatchObject({ status: 409, body: { code: "JOB_NOT_RUNNING" } })
    })))

  it.scoped("refuses to start what is not a job of the installed version (JOB_UNAVAILABLE)", () =>
    withNode(Effect.gen(function*() {
      yield* install(jobProbe())
      const id = yield* conversation
      const widget = yield* place(id, { tools: ["read_value"] })
      const notJob = yield* Effect.flip(start(widget, "read_value", { key: "a" }))
      expect(notJob).toMatchObject({ _tag: "JobUnavailable", reason: "not-a-job" })
      const older = yield* place(id, { version: "0.9.0" })
      expect(yield* Effect.flip(start(older, "slow", {}))).toMatchObject({ _tag: "JobUnavailable", reason: "not-installed" })
      expect(yield* listJobs(whereOf(widget))).toEqual({ status: 200, body: { jobs: [] } })
    })))

  it.effect("cancels running jobs at shutdown, and fails a job a crash left running at the next start, never running it again", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const scope = yield* Scope.make()
      const { id, jobId, instanceId } = yield* withNode(Effect.gen(function*() {
        yield* install(jobProbe())
        const id = yield* conversation
        const widget = yield* place(id)
        const job = yield* start(widget, "slow", { millis: 600_000 })
        yield* jobUntil(widget, job.jobId, "running")
        return { id, jobId: job.jobId, instanceId: widget.instanceId }
      }), dataDir).pipe(Scope.extend(scope))
      yield* Scope.close(scope, Exit.void)
      expect(query(dataDir, "SELECT status FROM jobs WHERE id = ?", jobId)).toEqual([{ status: "cancelled" }])

      // What a crash leaves: a row still running and nothing told (the process ended before it could write the end).
      const db = new Database(path.join(dataDir, "node.db"))
      db.prepare("UPDATE jobs SET status = 'running', ended_at = NULL, error = NULL WHERE id = ?").run(jobId)
      db.prepare("DELETE FROM notices WHERE subject_id = ?").run(jobId)
      db.close()
      yield* Effect.scoped(withNode(Effect.gen(function*() {
        const job = (yield* getJob({ id, instanceId }, jobId)).body.job
        expect(job).toMatchObject({ status: "failed", error: { code: "JOB_INTERRUPTED" } })
        expect(notices(dataDir, jobId).map((n) => n.data.status)).toEqual(["failed"])
      }), dataDir))
    }))
})
