/**
 * ListingCache over the package directory, and the directory as everyone else sees it, decorated so the cache
 * learns from every fresh answer the node gets anyway: the installer asks the directory on each install and each
 * granted decision, widget reads ask it too, and adding a folder changes what it says about a package.
 *
 * State is one Ref of entries by package id. A read plans each package with `planRead` (services/node/ListingCache),
 * starts the requests it owns in a FiberSet of the layer's scope (so a reader that goes away does not cancel the
 * request others wait on) and waits only for packages it has no usable answer for, within `firstWait` of the request.
 */
import { Clock, Context, Deferred, Duration, Effect, Exit, FiberId, FiberSet, Layer, Option, Ref } from "effect"
import type { Listing } from "../../../schema/node/Package.js"
import {
  defaultFreshness,
  type Freshness,
  ListingCache,
  planRead,
  type Published
} from "../../../services/node/ListingCache.js"
import { PackageDirectory } from "../../../services/node/PackageDirectory.js"

export interface Settings extends Freshness {
  /** A directory request running longer is abandoned; the next read starts another. */
  readonly requestTimeout: Duration.Duration
  /** Directory requests at once (the marketplace client allows 8 detail requests at once for a search). */
  readonly concurrency: number
  /** Packages remembered; beyond it the one read longest ago is forgotten. */
  readonly capacity: number
}

export const defaultSettings: Settings = {
  ...defaultFreshness,
  requestTimeout: Duration.seconds(10),
  concurrency: 8,
  capacity: 1000
}

interface Entry {
  readonly answer: Published | undefined
  readonly answeredAt: number | null
  /** The request in flight: its start and the signal its readers wait on (also its identity). */
  readonly request: { readonly startedAt: number; readonly done: Deferred.Deferred<void> } | null
  readonly readAt: number
}

const bindingOf = (listing: Listing): Published => ({
  version: listing.version,
  source: listing.source,
  digest: listing.digest,
  contentDigest: listing.contentDigest
})

/** Keeps at most `capacity` entries: the one read longest ago goes first. */
const bounded = (entries: Map<string, Entry>, capacity: number) => {
  while (entries.size > capacity) {
    let oldest: string | undefined
    let oldestAt = Number.POSITIVE_INFINITY
    for (const [id, entry] of entries) {
      if (entry.readAt < oldestAt) {
        oldest = id
        oldestAt = entry.readAt
      }
    }
    if (oldest === undefined) break
    entries.delete(oldest)
  }
  return entries
}

export const make = (settings: Settings) =>
  Effect.gen(function*() {
    const directory = yield* PackageDirectory
    const state = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())
    const requests = yield* FiberSet.make()
    const permits = yield* Effect.makeSemaphore(settings.concurrency)
    const ttlMillis = Duration.toMillis(settings.ttl)

    /** Records an answer the node got (a request of ours, or anyone's fresh `find`); drops a request it supersedes. */
    const remember = (packageId: string, answer: Published, at: number) =>
      Ref.update(state, (entries) => {
        const next = new Map(entries)
        next.set(packageId, { answer, answeredAt: at, request: null, readAt: entries.get(packageId)?.readAt ?? at })
        return bounded(next, settings.capacity)
      })

    /** Ends our request: records its answer unless someone else answered or forgot the package meanwhile. */
    const settle = (packageId: string, done: Deferred.Deferred<void>, answer: Option.Option<Published>, at: number) =>
      Ref.update(state, (entries) => {
        const entry = entries.get(packageId)
        if (entry === undefined || entry.request?.done !== done) return entries
        const next = new Map(entries)
        next.set(packageId, Option.match(answer, {
          onNone: () => ({ ...entry, request: null }),
          onSome: (published) => ({ ...entry, answer: published, answeredAt: at, request: null })
        }))
        return next
      })

    const request = (packageId: string, done: Deferred.Deferred<void>) =>
      permits.withPermits(1)(directory.find(packageId)).pipe(
        Effect.map(Option.match({ onNone: () => null, onSome: bindingOf })),
        // A listed folder that cannot be read now publishes nothing (the approval is not listed), as before.
        Effect.catchAll(() => Effect.succeed(null)),
        Effect.timeoutOption(settings.requestTimeout),
        // A defect ends the request like a timeout (no answer; the next read asks again), and is logged.
        Effect.tapDefect((cause) => Effect.logError("ListingCache: a directory request died", cause)),
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.flatMap(Clock.currentTimeMillis, (at) =>
            settle(packageId, done, Exit.isSuccess(exit) ? exit.value : Option.none(), at))
        ),
        Effect.ensuring(Deferred.succeed(done, undefined))
      )

    const published = (packageIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        // Planned and started as one step: a request recorded as in flight is always running (an interrupted reader
        // in between would leave its readers waiting on a request nobody runs).
        const plans = yield* Effect.uninterruptible(Effect.tap(Ref.modify(state, (entries) => {
          const next = new Map(entries)
          const planned = packageIds.map((packageId) => {
            const entry = entries.get(packageId)
            const plan = planRead(
              entry && { answeredAt: entry.answeredAt, requestStartedAt: entry.request?.startedAt ?? null },
              now,
              settings
            )
            const inFlight = plan.start ? { startedAt: now, done: Deferred.unsafeMake<void>(FiberId.none) } : entry?.request ?? null
            next.set(packageId, {
              answer: entry?.answer,
              answeredAt: entry?.answeredAt ?? null,
              request: inFlight,
              readAt: now
            })
            return { packageId, plan, answer: entry?.answer, done: inFlight?.done }
          })
          return [planned, bounded(next, settings.capacity)] as const
        }), (planned) =>
          Effect.forEach(
            planned.filter(({ done, plan }) => plan.start && done !== undefined),
            // Interruptible again: the node stopping ends the requests in flight.
            ({ done, packageId }) => FiberSet.run(requests, Effect.interruptible(request(packageId, done!))),
            { discard: true }
          )))
        const answers = new Map<string, Published>()
        for (const { answer, packageId, plan } of plans) {
          if (plan.use && answer !== undefined) answers.set(packageId, answer)
        }
        const waits = plans.filter((p) => !p.plan.use && p.plan.waitMillis > 0 && p.done !== undefined)
        if (waits.length === 0) return answers
        // Every package without an answer is waited for at once, each within its own bound.
        yield* Effect.forEach(
          waits,
          ({ done, plan }) => Effect.timeoutOption(Deferred.await(done!), Duration.millis(plan.waitMillis)),
          { concurrency: "unbounded", discard: true }
        )
        const after = yield* Ref.get(state)
        const at = yield* Clock.currentTimeMillis
        for (const { packageId } of waits) {
          const entry = after.get(packageId)
          if (entry?.answer !== undefined && entry.answeredAt !== null && at - entry.answeredAt < ttlMillis) {
            answers.set(packageId, entry.answer)
          }
        }
        return answers
      })

    const invalidate = (packageId: string) =>
      Ref.update(state, (entries) => {
        if (!entries.has(packageId)) return entries
        const next = new Map(entries)
        next.delete(packageId)
        return next
      })

    const settled = Effect.flatMap(Ref.get(state), (entries) =>
      Effect.forEach(
        [...entries.values()].flatMap((entry) => entry.request === null ? [] : [entry.request.done]),
        Deferred.await,
        { discard: true }
      ))

    const cache = ListingCache.of({ published, invalidate, settled })

    // Every fresh answer anyone gets from the directory is the newest the node knows: the cache keeps it.
    const learn = (packageId: string) => (answer: Published) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => remember(packageId, answer, at))
    const decorated = PackageDirectory.of({
      list: directory.list,
      find: (packageId) =>
        directory.find(packageId).pipe(
          Effect.tap((found) => learn(packageId)(Option.match(found, { onNone: () => null, onSome: bindingOf }))),
          Effect.tapError(() => learn(packageId)(null))
        ),
      addLocal: (folder) => Effect.tap(directory.addLocal(folder), (listing) => invalidate(listing.packageId))
    })

    return Context.make(ListingCache, cache).pipe(Context.add(PackageDirectory, decorated))
  })

/** ListingCache, and PackageDirectory decorated to feed it; needs the directory it decorates. */
export const layer = (settings: Partial<Settings> = {}) =>
  Layer.scopedContext(make({ ...defaultSettings, ...settings }))
