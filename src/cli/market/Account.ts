/**
 * `clark market me …`: the account of the credential, the listings its
 * publishers own, and deleting it (a signed-in session only, confirmed).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Prompt from "@effect/cli/Prompt"
import { Effect } from "effect"
import * as Render from "./Render.js"
import { connectionOptions, MarketFailure } from "./Settings.js"
import { idempotencyHeaders, idempotencyKey, request } from "./Shared.js"

const packages = Command.make("packages", connectionOptions, (options) =>
  request(
    options,
    (api) => api.account.myPackages({ withResponse: true }),
    (list) => Render.ownedListings(list.items)
  )).pipe(Command.withDescription("List the listings your publishers own. In any curation state."))

const unconfirmed = new MarketFailure({
  message:
    "confirmation_required: deleting the account cannot be undone; run it in a terminal to confirm, or pass --yes"
})

/** On a terminal, asks (naming the account); elsewhere nothing can answer, so only --yes goes ahead. */
const confirm = (yes: boolean, account: Effect.Effect<{ readonly name: string; readonly email: string }, unknown>) =>
  Effect.gen(function*() {
    if (yes) return
    if (process.stdin.isTTY !== true) return yield* unconfirmed
    const { email, name } = yield* account
    const confirmed = yield* Prompt.confirm({
      message: `Delete the account ${name} <${email}> and everything tied to it? This cannot be undone`,
      initial: false
    })
    if (!confirmed) return yield* new MarketFailure({ message: "cancelled: nothing was deleted" })
  })

const remove = Command.make("delete", {
  ...connectionOptions,
  idempotencyKey,
  yes: Options.boolean("yes").pipe(Options.withDescription("delete without asking (needed without a terminal)"))
}, (options) =>
  Effect.zipRight(
    // Refused before any request when nothing can confirm.
    options.yes || process.stdin.isTTY === true ? Effect.void : Effect.fail(unconfirmed),
    request(
      options,
      (api) =>
        Effect.gen(function*() {
          yield* confirm(options.yes, api.account.me())
          const headers = yield* idempotencyHeaders(options)
          return yield* api.account.deleteMe({ headers, payload: { confirm: "DELETE" }, withResponse: true })
        }),
      Render.deletedAccount
    )
  )).pipe(
    Command.withDescription(
      "Delete your account and all data tied to it. Needs a session token; asks first unless --yes."
    )
  )

export const me = Command.make("me", connectionOptions, (options) =>
  request(options, (api) => api.account.me({ withResponse: true }), Render.profile)).pipe(
    Command.withDescription("Show your account and the credential's scopes"),
    Command.withSubcommands([packages, remove])
  )
