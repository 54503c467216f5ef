/**
 * What the marketplace takes from the address its server is bound to: the
 * default public origin, the start-up line, and a readable refusal when the
 * address cannot be had. Imported with the server only (it loads the HTTP
 * server modules, which the CLI's other commands never need).
 */
import { HttpServer } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import * as net from "node:net"
import { apiAudience, listenOrigin, Settings, settingsConfig } from "../Settings.js"

/** The origin of a bound server's address; none for a Unix socket. */
const boundOrigin = (address: HttpServer.Address): string | undefined =>
  address._tag === "TcpAddress" ? listenOrigin(address.hostname, address.port) : undefined

/**
 * Settings from the environment, with the public origin following the server's
 * bound address when MARKETPLACE_PUBLIC_ORIGIN is not set. The server is looked
 * up, not required, so the layer also builds where no server is provided.
 */
export const SettingsLive = Layer.effect(
  Settings,
  Effect.flatMap(
    Effect.serviceOption(HttpServer.HttpServer),
    (server) => settingsConfig(Option.getOrUndefined(Option.flatMapNullable(server, (s) => boundOrigin(s.address))))
  )
)

/** The start-up line: where the API answers, where it is described, and the public origin when that differs. */
export const announce = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  const origin = boundOrigin(server.address)
  // Read as the API's own settings are; a bad value has stopped the server before this runs.
  const settings = yield* Effect.orDie(settingsConfig(origin))
  const bound = origin ?? HttpServer.formatAddress(server.address)
  const base = `${bound}/api/v1`
  const publicNote = settings.publicOrigin === bound ? "" : `; public origin ${settings.publicOrigin} (OAuth audience ${apiAudience(settings)})`
  yield* Effect.logInfo(`Marketplace API at ${base}, described at ${base}/openapi.json${publicNote}`)
})

/** Why the server could not listen, in one line an operator can act on. */
export const listenFailure = (cause: unknown, host: string, port: number): string => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`
  switch (code) {
    case "EADDRINUSE":
      return `Cannot listen on ${address}: the port is already in use. Stop what holds it or choose another with --port or MARKETPLACE_PORT.`
    case "EACCES":
      return `Cannot listen on ${address}: not permitted (ports below 1024 need privileges). Choose another with --port or MARKETPLACE_PORT.`
    case "EADDRNOTAVAIL":
      return `Cannot listen on ${address}: ${host} is not an address of this machine. Choose another with --host or MARKETPLACE_HOST.`
    default:
      return `Cannot listen on ${address}: ${cause instanceof Error ? cause.message : String(cause)}`
  }
}

/**
 * Fails with `listenFailure`'s line when `host:port` cannot be listened on, before
 * anything else starts: a taken port then stops the command with that one line,
 * without opening (or creating) the database first. The server's own listen still
 * reports the same way should the port be taken in between.
 */
export const checkListen = (host: string, port: number): Effect.Effect<void, Error> =>
  Effect.async<void, Error>((resume) => {
    const probe = net.createServer()
    probe.once("error", (cause) => resume(Effect.fail(new Error(listenFailure(cause, host, port)))))
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resume(Effect.void)))
    return Effect.sync(() => probe.close())
  })
