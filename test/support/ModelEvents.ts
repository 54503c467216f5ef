/** Reading a ModelProvider's answer in tests. */
import { Deferred, Effect, Exit, Option } from "effect"
import type { ModelEvent, ModelProvider, ModelRequest } from "../../services/node/ModelProvider.js"

/** The first event of an answer, then the call is interrupted (the consumer has gone): none when it ends without. */
export const firstEvent = (provider: ModelProvider["Type"], request: ModelRequest) =>
  Effect.gen(function*() {
    const first = yield* Deferred.make<ModelEvent>()
    return yield* Effect.raceFirst(
      Effect.as(provider.run(request, (event) => Deferred.unsafeDone(first, Exit.succeed(event))), Option.none<ModelEvent>()),
      Effect.map(Deferred.await(first), Option.some)
    )
  })
