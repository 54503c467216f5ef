/**
 * Name resolution for media fetches, as a service so tests can make a name
 * answer private addresses or change its answer between lookups. It is
 * consulted from the request's own `lookup`, once per connection: the
 * addresses checked are the addresses dialled.
 */
import { Context, Data, Effect, Layer } from "effect"
import * as dns from "node:dns"

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

export class ResolveFailed extends Data.TaggedError("ResolveFailed")<{ readonly code: string }> {}

export class MediaResolver extends Context.Tag("clark/node/media/MediaResolver")<MediaResolver, {
  /** Every address the name has (an empty answer is a failure). */
  readonly resolve: (hostname: string) => Effect.Effect<ReadonlyArray<ResolvedAddress>, ResolveFailed>
}>() {}

/** The system resolver (getaddrinfo, as Node's default lookup: hosts file, then DNS), every answer. */
export const layerSystem = Layer.succeed(
  MediaResolver,
  MediaResolver.of({
    resolve: (hostname) =>
      Effect.tryPromise({
        try: () => dns.promises.lookup(hostname, { all: true, verbatim: true }),
        catch: (error) => new ResolveFailed({ code: String((error as NodeJS.ErrnoException).code ?? "EAI_FAIL") })
      }).pipe(
        Effect.flatMap((answers) =>
          answers.length === 0
            ? Effect.fail(new ResolveFailed({ code: "ENOTFOUND" }))
            : Effect.succeed(answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 } as const)))
        )
      )
  })
)
