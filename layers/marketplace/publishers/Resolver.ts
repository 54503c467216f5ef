/**
 * Name resolution for the publisher checks, as a service: the system's in production, a scripted one in
 * tests (a name answering a public or a private address, TXT records as a test sets them). Addresses are
 * asked from the connection's own `lookup` (WellKnown.ts), so the addresses checked are the ones dialled.
 */
import { Context, Effect, Layer } from "effect"
import * as dns from "node:dns"

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

export class PublisherResolver extends Context.Tag("clark/marketplace/PublisherResolver")<PublisherResolver, {
  /** Every address of the name; fails with the resolver's code (ENOTFOUND, …). */
  readonly lookup: (hostname: string) => Effect.Effect<ReadonlyArray<ResolvedAddress>, string>
  /** The TXT records at the name, each as its chunks; fails with the resolver's code (ENOTFOUND, ENODATA, …). */
  readonly txt: (name: string) => Effect.Effect<ReadonlyArray<ReadonlyArray<string>>, string>
}>() {}

const code = (error: unknown, fallback: string) => String((error as NodeJS.ErrnoException)?.code ?? fallback)

/** getaddrinfo for addresses (as Node dials them: hosts file, then DNS), DNS for TXT records. */
export const layerSystem = Layer.succeed(
  PublisherResolver,
  PublisherResolver.of({
    lookup: (hostname) =>
      Effect.tryPromise({
        try: () => dns.promises.lookup(hostname, { all: true, verbatim: true }),
        catch: (error) => code(error, "EAI_FAIL")
      }).pipe(Effect.map((answers) =>
        answers.map((answer): ResolvedAddress => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }))
      )),
    txt: (name) => Effect.tryPromise({ try: () => dns.promises.resolveTxt(name), catch: (error) => code(error, "ESERVFAIL") })
  })
)
