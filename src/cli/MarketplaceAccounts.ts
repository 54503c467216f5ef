/** `clark marketplace admin user|token|oauth-token|session|publisher …`: accounts and credentials, directly on the database. */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import type { SqlClient } from "@effect/sql"
import { Clock, Console, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Role, Scope } from "../../schema/marketplace/Account.js"
import { AccountStore, type PublisherRole, type UnknownPublisher } from "../../services/marketplace/Accounts.js"
import { Credentials, type ScopeNotAllowed, type UnknownUser } from "../../services/marketplace/Credentials.js"
import { apiAudience, SettingsConfig } from "../marketplace/Settings.js"
import * as Lazy from "./Lazy.js"

type DatabaseLayer = (option: Option.Option<string>) => Layer.Layer<SqlClient.SqlClient, Error>

/** Provides a SQL-backed service built on the chosen database. */
const withSql = <ROut>(service: Layer.Layer<ROut, never, SqlClient.SqlClient>) =>
(database: Layer.Layer<SqlClient.SqlClient, Error>) => Effect.provide(service.pipe(Layer.provide(database)))

// The SQL layers are imported when a command runs (Lazy.ts).
export const withCredentials = withSql(
  Lazy.layer(() => import("../../layers/marketplace/sql/SqlCredentials.js"), (SqlCredentials) => SqlCredentials.layer)
)
const withAccounts = withSql(
  Lazy.layer(() => import("../../layers/marketplace/sql/SqlAccounts.js"), (SqlAccounts) => SqlAccounts.layer)
)

const email = Options.text("email").pipe(Options.withDescription("the account's email"))

const decodeScopes = Schema.decodeUnknownEither(Schema.Array(Scope))
const invalid = (message: string) => ValidationError.invalidValue(HelpDoc.p(message))
const scopesOption = Options.text("scopes").pipe(
  Options.withDescription("comma-separated scopes, e.g. packages:read,packages:curate"),
  Options.mapEffect((value) =>
    Effect.mapError(
      decodeScopes(value.split(",").map((s) => s.trim()).filter((s) => s.length > 0)),
      () => invalid(`--scopes must be scope names: ${Scope.literals.join(", ")}`)
    )
  )
)

/** `30d`, `12h` or `90m`. */
const lifetime = Options.text("expires-in").pipe(
  Options.withDescription("lifetime such as 30d, 12h or 90m"),
  Options.mapEffect((value) => {
    const match = /^(\d+)([dhm])$/.exec(value)
    if (match === null) return Effect.fail(invalid("--expires-in must look like 30d, 12h or 90m"))
    const amount = Number(match[1])
    return Effect.succeed(
      match[2] === "d" ? Duration.days(amount) : match[2] === "h" ? Duration.hours(amount) : Duration.minutes(amount)
    )
  })
)

/** The instant `duration` from now, by `Clock`. */
const expiryAfter = (duration: Duration.Duration) =>
  Effect.map(Clock.currentTimeMillis, (now) => new Date(now + Duration.toMillis(duration)))

const noAccount = (address: string) => new Error(`No account with the email ${address}`)

/** Why a token was not issued, as the operator reads it. */
const refusal = (error: UnknownUser | ScopeNotAllowed) =>
  error._tag === "UnknownUser"
    ? noAccount(error.email)
    : new Error(`The account's role does not allow: ${error.scopes.join(", ")}`)

/** A new token is printed once, alone on stdout (so scripts can capture it); only its hash is stored. */
const printToken = (token: Redacted.Redacted<string>) => Console.log(Redacted.value(token))

const publisherRoles = ["owner", "member"] as const satisfies ReadonlyArray<PublisherRole>

const membershipRefusal = (error: UnknownUser | UnknownPublisher) =>
  error._tag === "UnknownUser" ? noAccount(error.email) : new Error(`No publisher with the slug ${error.slug}`)

export const accountCommands = (database: Options.Options<Option.Option<string>>, databaseLayer: DatabaseLayer) => {
  const user = Command.make("user").pipe(
    Command.withDescription("Accounts of the marketplace"),
    Command.withSubcommands([
      Command.make("create", {
        database,
        email,
        name: Options.text("name").pipe(Options.withDescription("display name (default: the part of the email before @)"), Options.optional),
        role: Options.choice("role", Role.literals).pipe(Options.withDescription("the account's role"), Options.withDefault("user" as const))
      }, (options) =>
        Effect.gen(function*() {
          const credentials = yield* Credentials
          const profile = yield* credentials.createUser({
            email: options.email,
            name: Option.getOrElse(options.name, () => options.email.split("@")[0] ?? options.email),
            role: options.role
          }).pipe(Effect.mapError((e) => new Error(`An account with the email ${e.email} exists already`)))
          yield* Console.log(`Created ${profile.role} ${profile.email} (${profile.id})`)
        }).pipe(withCredentials(databaseLayer(options.database)))).pipe(
        Command.withDescription("Create an account")
      )
    ])
  )

  const token = Command.make("token").pipe(
    Command.withDescription("Personal API tokens"),
    Command.withSubcommands([
      Command.make("create", { database, email, scopes: scopesOption, expiresIn: lifetime.pipe(Options.withDescription("default: no expiry"), Options.optional) }, (options) =>
        Effect.gen(function*() {
          const credentials = yield* Credentials
          const expiresAt = yield* Effect.transposeMapOption(options.expiresIn, expiryAfter)
          const token = yield* credentials.issueApiToken({
            email: options.email,
            scopes: options.scopes,
            expiresAt: Option.getOrUndefined(expiresAt)
          }).pipe(Effect.mapError(refusal))
          yield* printToken(token)
        }).pipe(withCredentials(databaseLayer(options.database)))).pipe(
        Command.withDescription("Issue a personal API token and print it once")
      ),
      Command.make("revoke", { database, token: Args.redacted({ name: "TOKEN" }).pipe(Args.withDescription("the token to revoke (cmk_…)")) }, (options) =>
        Effect.gen(function*() {
          const credentials = yield* Credentials
          const revoked = yield* credentials.revokeApiToken(options.token)
          if (!revoked) return yield* Effect.fail(new Error("No such live token"))
          yield* Console.log("Revoked")
        }).pipe(withCredentials(databaseLayer(options.database)))).pipe(
        Command.withDescription("Revoke a personal API token")
      )
    ])
  )

  const oauthToken = Command.make("oauth-token").pipe(
    Command.withDescription("OAuth access tokens (until an authorization flow issues them)"),
    Command.withSubcommands([
      Command.make("create", {
        database,
        email,
        scopes: scopesOption,
        audience: Options.text("audience").pipe(
          Options.withDescription("the API the token is for (default: MARKETPLACE_PUBLIC_ORIGIN/api/v1)"),
          Options.optional
        ),
        expiresIn: lifetime.pipe(Options.withDescription("default: 1h"), Options.withDefault(Duration.hours(1))),
        clientId: Options.text("client-id").pipe(
          Options.withDescription("the OAuth client the grant is recorded for (default: clark-admin)"),
          Options.withDefault("clark-admin")
        )
      }, (options) =>
        Effect.gen(function*() {
          const credentials = yield* Credentials
          // The server accepts only its own audience, so that is the useful default.
          const audience = yield* Option.match(options.audience, {
            onNone: () => Effect.map(SettingsConfig, apiAudience),
            onSome: Effect.succeed
          })
          const token = yield* credentials.issueOAuthToken({
            email: options.email,
            scopes: options.scopes,
            audience,
            clientId: options.clientId,
            expiresAt: yield* expiryAfter(options.expiresIn)
          }).pipe(Effect.mapError(refusal))
          yield* printToken(token)
        }).pipe(withCredentials(databaseLayer(options.database)))).pipe(
        Command.withDescription("Issue an OAuth access token and print it once")
      )
    ])
  )

  const session = Command.make("session").pipe(
    Command.withDescription("Sign-in sessions"),
    Command.withSubcommands([
      Command.make("create", { database, email }, (options) =>
        Effect.gen(function*() {
          const credentials = yield* Credentials
          const token = yield* credentials.issueSession(options.email).pipe(
            Effect.mapError((e) => noAccount(e.email))
          )
          yield* printToken(token)
        }).pipe(withCredentials(databaseLayer(options.database)))).pipe(
        Command.withDescription("Open a session for an account and print its token")
      )
    ])
  )

  const publisher = Command.make("publisher").pipe(
    Command.withDescription("Publisher memberships"),
    Command.withSubcommands([
      Command.make("add-member", {
        database,
        email,
        publisher: Options.text("publisher").pipe(Options.withDescription("the publisher's slug")),
        role: Options.choice("role", publisherRoles).pipe(
          Options.withDescription("default: owner"),
          Options.withDefault("owner" as const)
        )
      }, (options) =>
        Effect.gen(function*() {
          const accounts = yield* AccountStore
          yield* accounts.setPublisherMember({
            email: options.email,
            publisherSlug: options.publisher,
            role: options.role
          }).pipe(Effect.mapError(membershipRefusal))
          yield* Console.log(`${options.email} is now ${options.role === "owner" ? "an owner" : "a member"} of ${options.publisher}`)
        }).pipe(withAccounts(databaseLayer(options.database)))).pipe(
        Command.withDescription("Make an account an owner or member of a publisher")
      )
    ])
  )

  return [user, token, oauthToken, session, publisher] as const
}
