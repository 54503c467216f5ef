/**
 * Services the node builds on their first call rather than at start-up. The host app waits for the node's
 * first healthy `/health`, and the audio fetcher and the map tiles, with their modules (file-type,
 * music-metadata, lru-cache, ipaddr.js), are used by few requests: they are imported and built by the first
 * request that needs them, once, in the node's scope.
 */
import { Context, Effect, Layer } from "effect"

/**
 * A layer of `tag` whose implementation `load` is imported and built on the first call of a method. `wrap`
 * forwards each method of the service to the built one.
 */
export const onFirstUse = <I, S, R>(
  tag: Context.Tag<I, S>,
  load: () => Promise<Layer.Layer<I, never, R>>,
  wrap: (service: Effect.Effect<S>) => S
): Layer.Layer<I, never, R> =>
  Layer.scoped(
    tag,
    Effect.gen(function*() {
      const context = yield* Effect.context<R>()
      const scope = yield* Effect.scope
      // Uninterruptible: a caller that goes away must not leave the one shared build half done.
      const service = yield* Effect.cached(
        Effect.promise(load).pipe(
          Effect.flatMap((layer) => Layer.buildWithScope(layer, scope)),
          Effect.map(Context.get(tag)),
          Effect.provide(context),
          Effect.uninterruptible
        )
      )
      return wrap(service)
    })
  )
