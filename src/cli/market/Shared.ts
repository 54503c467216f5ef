/**
 * What the `clark market` commands share: the request that calls the
 * marketplace through the typed client (imported when a command runs, see
 * Lazy.ts), optional fields, and the idempotency key of POSTs.
 */
import * as Args from "@effect/cli/Args"
import * as Options from "@effect/cli/Options"
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { load } from "../Lazy.js"
import type { Call } from "./Client.js"
import type { ConnectionOptions } from "./Settings.js"

/**
 * Calls the marketplace and prints the result. The typed client and the contract it is derived from are
 * imported when a command runs (Lazy.ts).
 */
export const request = <A, E, R = never>(options: ConnectionOptions, call: Call<A, E, R>, render: (result: A) => string) =>
  load(() => import("./Client.js"), (Client) => Client.request(options, call, render))

type Given<F> = { [K in keyof F]?: F[K] extends Option.Option<infer V> ? V : never }

/** The fields that were given, for the contract's optional fields (absent, never undefined). */
export const given = <F extends Record<string, Option.Option<unknown>>>(fields: F): Given<F> =>
  Object.fromEntries(
    Object.entries(fields).flatMap(([key, value]) => (Option.isSome(value) ? [[key, value.value]] : []))
  ) as Given<F>

export const optionalText = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

export const packageName = Args.text({ name: "NAME" }).pipe(
  Args.withDescription("registry package name; scoped names look like @scope/name")
)

export const idempotencyKey = optionalText(
  "idempotency-key",
  "1-255 characters, replayed by the marketplace for 24 hours (default: a random key per invocation, " +
    "so a transport retry is never applied twice)"
)

export type PostOptions = ConnectionOptions & { readonly idempotencyKey: Option.Option<string> }

export const idempotencyHeaders = (options: PostOptions) =>
  Effect.map(
    Option.match(options.idempotencyKey, { onNone: () => Effect.sync(randomUUID), onSome: Effect.succeed }),
    (key) => ({ "idempotency-key": key })
  )

/** `name@version` as npm writes it; the `@` of a scope is not a version separator. */
export const splitVersion = (spec: string): { readonly name: string; readonly version: Option.Option<string> } => {
  const at = spec.lastIndexOf("@")
  return at <= 0 ? { name: spec, version: Option.none() } : { name: spec.slice(0, at), version: Option.some(spec.slice(at + 1)) }
}
