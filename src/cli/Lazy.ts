/**
 * Modules loaded only when a command runs. `clark` describes every command (names, options, help) from light
 * modules and imports what a command does (servers, SQL clients, API clients, their schemas) when it runs:
 * importing all of it cost about 2 s before any command did its work.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Imports a module when the effect runs, and runs what `use` makes of it. */
export const load = <M, A, E, R>(module: () => Promise<M>, use: (loaded: M) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.promise(module), use)

/** A layer whose module is imported when the layer is built. */
export const layer = <M, ROut, E, RIn>(module: () => Promise<M>, use: (loaded: M) => Layer.Layer<ROut, E, RIn>) =>
  Layer.unwrapEffect(Effect.map(Effect.promise(module), use))
