/**
 * `clark market submit NAME[@VERSION]`: asks the marketplace to index a registry package version (scope
 * packages:submit), then waits, with one progress line on stderr, until the indexer has indexed it or failed.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Duration, Effect } from "effect"
import type { Submission } from "../../../schema/marketplace/Submission.js"
import { connectionOptions, MarketFailure } from "./Settings.js"
import { given, request, splitVersion } from "./Shared.js"

const done = (status: Submission["status"]) => status === "indexed" || status === "failed"

const line = (s: Submission) =>
  `${s.packageName}${s.version === null ? "" : `@${s.version}`}: ${s.status}${s.error === null ? "" : ` (${s.error})`}`

export const submit = Command.make("submit", {
  ...connectionOptions,
  spec: Args.text({ name: "NAME[@VERSION]" }).pipe(
    Args.withDescription("registry package name, optionally with a version: @scope/name@1.2.0 (default: the latest)")
  ),
  noWait: Options.boolean("no-wait").pipe(Options.withDescription("print the submission and return at once")),
  timeout: Options.integer("timeout").pipe(
    Options.withDescription("seconds to wait for the indexer (default 300)"),
    Options.withDefault(300)
  )
}, (options) => {
  const { name, version } = splitVersion(options.spec)
  return request(
    options,
    (api) =>
      Effect.gen(function*() {
        const posted = yield* api.publish.submit({ payload: { packageName: name, ...given({ version }) }, withResponse: true })
        const [result] = posted
        if (options.noWait || done(result.submission.status)) return [result.submission, posted[1]] as const
        const progress = (s: Submission) => Effect.sync(() => process.stderr.write(`\r${line(s)}\x1b[K`))
        yield* progress(result.submission)
        // Polls the submission once a second: the indexer runs in the marketplace, another process.
        const final = yield* Effect.gen(function*() {
          while (true) {
            yield* Effect.sleep(Duration.seconds(1))
            const answer = yield* api.publish.submission({ path: { id: result.submission.id }, withResponse: true })
            yield* progress(answer[0])
            if (done(answer[0].status)) return answer
          }
        }).pipe(
          Effect.timeoutFail({
            duration: Duration.seconds(options.timeout),
            onTimeout: () =>
              new MarketFailure({ message: `timeout: ${line(result.submission)} still not indexed after ${options.timeout} s` })
          }),
          Effect.ensuring(Effect.sync(() => process.stderr.write("\n")))
        )
        if (final[0].status === "failed") return yield* new MarketFailure({ message: `failed: ${line(final[0])}` })
        return final
      }),
    line
  )
}).pipe(
  Command.withDescription(
    "Ask the marketplace to index a registry package, and wait. Until it is indexed or failed (exit 1); " +
      "needs the scope packages:submit"
  )
)
