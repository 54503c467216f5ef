/**
 * `clark market tokens …`: the personal API tokens of the credential's account
 * (account:read to list, account:write to create and revoke). A created token
 * is printed once, alone on stdout, so a script can capture it; the marketplace
 * never shows it again.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Effect, Schema } from "effect"
import { Scope } from "../../../schema/marketplace/Account.js"
import type { ApiTokenInfo } from "../../../schema/marketplace/AccountCredentials.js"
import { table } from "../Output.js"
import { connectionOptions, MarketFailure } from "./Settings.js"
import { given, request } from "./Shared.js"

const renderTokens = (tokens: ReadonlyArray<ApiTokenInfo>) =>
  tokens.length === 0 ? "no API tokens" : table([
    ["ID", "NAME", "SCOPES", "CREATED", "EXPIRES", "REVOKED"],
    ...tokens.map((token) => [
      token.id,
      token.name,
      token.scopes.join(","),
      token.createdAt,
      token.expiresAt ?? "never",
      token.revokedAt ?? "-"
    ])
  ])

const list = Command.make("list", connectionOptions, (options) =>
  request(options, (api) => api.credentials.tokens({ withResponse: true }), (result) => renderTokens(result.items))).pipe(
    Command.withDescription("List your API tokens, revoked ones too; never their values")
  )

const decodeScopes = Schema.decodeUnknown(Schema.Array(Scope))

const create = Command.make("create", {
  ...connectionOptions,
  name: Args.text({ name: "NAME" }).pipe(Args.withDescription("what the token is for, 1-100 characters")),
  scopes: Options.text("scopes").pipe(
    Options.withDescription("comma-separated scopes the token gets; the credential you use must hold them")
  ),
  expiresInDays: Options.integer("expires-in-days").pipe(
    Options.withDescription("lifetime in days, 1-366 (default: no expiry)"),
    Options.optional
  )
}, (options) =>
  request(
    options,
    (api) =>
      Effect.gen(function*() {
        const scopes = yield* decodeScopes(options.scopes.split(",").map((s) => s.trim()).filter((s) => s !== "")).pipe(
          Effect.mapError(() => new MarketFailure({ message: `validation_failed: --scopes must be scope names: ${Scope.literals.join(", ")}` }))
        )
        return yield* api.credentials.createToken({
          payload: { name: options.name, scopes, ...given({ expiresInDays: options.expiresInDays }) },
          withResponse: true
        })
      }),
    (created) => created.secret
  )).pipe(Command.withDescription("Create an API token and print it once"))

const revoke = Command.make("revoke", {
  ...connectionOptions,
  id: Args.text({ name: "ID" }).pipe(Args.withDescription("the token's id (tok_…, from `tokens list`)"))
}, (options) =>
  request(
    options,
    (api) => api.credentials.revokeToken({ path: { id: options.id }, withResponse: true }),
    (token) => `revoked ${token.id} (${token.name}) at ${token.revokedAt ?? "-"}`
  )).pipe(Command.withDescription("Revoke one of your API tokens at once"))

export const tokens = Command.make("tokens").pipe(
  Command.withDescription("Your personal API tokens (account:read, account:write)"),
  Command.withSubcommands([list, create, revoke])
)
