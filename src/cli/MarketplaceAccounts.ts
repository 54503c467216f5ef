/** `clark marketplace admin user|token|session …`: issue credentials directly on the database. */
import { Args, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Clock, Console, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import * as SqlCredentials from "../../layers/marketplace/sql/SqlCredentials.js"
import { Role, Scope } from "../../schema/marketplace/Account.js"
import { Credentials } from "../../services/marketplace/Credentials.js"

export const withCredentials = (database: Layer.Layer<import("@effect/sql").SqlClient.SqlClient>) =>
  Effect.provide(SqlCredentials.layer.pipe(Layer.provide(database)))

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

/** `30d`, `12h`, `90m` or anything `Duration.decode` reads. */
const expiresIn = Options.text("expires-in").pipe(
  Options.withDescription("lifetime such as 30d, 12h or 90m"),
  Options.mapEffect((value) => {
    const match = /^(\d+)([dhm])$/.exec(value)
    if (match === null) return Effect.fail(invalid("--expires-in must look like 30d, 12h or 90m"))
    const amount = Number(match[1])
    return Effect.succeed(
      match[2] === "d" ? Duration.days(amount) : match[2] === "h" ? Duration.hours(amount) : Duration.minutes(amount)
    )
  }),
  Options.optional
)

type DatabaseLayer = (option: Option.Option<string>) => Layer.Layer<import("@effect/sql").SqlClient.SqlClient>

export const accountCommands = (database: Options.Options<Option.Option<string>>, databaseLayer: DatabaseLayer) => {
  const user = Command.make("user").pipe(
    Command.withDescription("Accounts"),
    Command.withSubcommands([
      Command.make("create", {
        database,
        email,
        name: Options.text("name").pipe(Options.optional),
        role: Options.choice("role", Role.literals).pipe(Options.withDefault("user" as const))
      }, (options) =>
        Effect.gen(function*() {
          const credentials = yield* Credentials
          const profile = yield* credentials.createUser({
            email: options.email,
            name: Option.getOrElse(options.name, () => options.email.split("@")[0] ?? options.email),
            role: options.role
          }).pipe(Effect.mapError((e) => new Error(`An account with the email ${e.email} exists already`)))
          yield* Console.log(`Created ${profile.role} ${profile.email} (${profile.id})`)
        }).pipe(withCredentials(databaseLayer(options.database))))
    ])
  )

  const token = Command.make("token").pipe(
    Command.withDescription("Personal API tokens"),
    Command.withSubcommands([
      Command.make("create", { database, email, scopes: scopesOption, expiresIn }, (options) =>
        Effect.gen(function*() {
          const credentials = yield* Credentials
          const now = yield* Clock.currentTimeMillis
          const token = yield* credentials.issueApiToken({
            email: options.email,
            scopes: options.scopes,
            expiresAt: Option.getOrUndefined(
              Option.map(options.expiresIn, (lifetime) => new Date(now + Duration.toMillis(lifetime)))
            )
          }).pipe(Effect.mapError((e) =>
            e._tag === "UnknownUser"
              ? new Error(`No account with the email ${e.email}`)
              : new Error(`The account's role does not allow: ${e.scopes.join(", ")}`)
          ))
          // Printed once; only its hash is stored.
          yield* Console.log(Redacted.value(token))
        }).pipe(withCredentials(databaseLayer(options.database)))),
      Command.make("revoke", { database, token: Args.redacted({ name: "TOKEN" }) }, (options) =>
        Effect.gen(function*() {
          const credentials = yield* Credentials
          const revoked = yield* credentials.revokeApiToken(options.token)
          if (!revoked) return yield* Effect.fail(new Error("No such live token"))
          yield* Console.log("Revoked")
        }).pipe(withCredentials(databaseLayer(options.database))))
    ])
  )

  const session = Command.make("session").pipe(
    Command.withDescription("Sessions"),
    Command.withSubcommands([
      Command.make("create", { database, email }, (options) =>
        Effect.gen(function*() {
          const credentials = yield* Credentials
          const token = yield* credentials.issueSession(options.email).pipe(
            Effect.mapError((e) => new Error(`No account with the email ${e.email}`))
          )
          yield* Console.log(Redacted.value(token))
        }).pipe(withCredentials(databaseLayer(options.database))))
    ])
  )

  return [user, token, session] as const
}
