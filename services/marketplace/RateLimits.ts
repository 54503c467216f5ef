/**
 * Rate limits: which budget a request spends, the client address it comes
 * from, and the headers that tell the client where it stands. Pure rules; the
 * counting is `@effect/experimental`'s RateLimiter over a store
 * (layers/marketplace/sql/SqlRateLimits.ts), the wiring a middleware
 * (src/marketplace/http/RateLimiting.ts).
 */
import { Context, type Effect, Either } from "effect"
import ipaddr from "ipaddr.js"
import { createHash } from "node:crypto"

export interface RateLimitSettings {
  /** `MARKETPLACE_RATE_LIMITS=off` turns limiting off (benchmarks, a trusted network). */
  readonly enabled: boolean
  /** Requests per window per client address: public reads, and requests whose credential was refused. */
  readonly publicLimit: number
  /** Requests per window per credential on the account and curation routes. */
  readonly authenticatedLimit: number
  readonly windowSeconds: number
  /** Addresses or CIDR ranges of proxies whose `X-Forwarded-For` is believed; none by default. */
  readonly trustedProxies: ReadonlyArray<string>
  /** `shared`: one budget for all replicas through PostgreSQL; `per-replica`: each process counts alone. */
  readonly store: "shared" | "per-replica"
}

export const defaultRateLimits: RateLimitSettings = {
  enabled: true,
  publicLimit: 600,
  authenticatedLimit: 600,
  windowSeconds: 60,
  trustedProxies: [],
  store: "shared"
}

/** What a route's requests spend: nothing (health probes), the address's budget, or the credential's. */
export type RouteKind = "exempt" | "public" | "authenticated"

export interface RoutePattern {
  readonly method: string
  /** An HttpApi path such as `/api/v1/packages/:name`. */
  readonly path: string
  readonly kind: RouteKind
}

export interface RouteTable {
  readonly classify: (method: string, url: string) => RouteKind
}

const escape = (segment: string) => segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Classifies a request by the route it will reach. A path parameter is one
 * raw segment (an encoded scoped name has no raw `/`). Anything that matches
 * no route, a 404 included, spends the address's budget like a public read.
 */
export const routeTable = (patterns: ReadonlyArray<RoutePattern>): RouteTable => {
  const compiled = patterns.map(({ kind, method, path }) => ({
    method,
    kind,
    regex: new RegExp(
      `^${path.split("/").map((segment) => (segment.startsWith(":") ? "[^/]+" : escape(segment))).join("/")}$`
    )
  }))
  return {
    classify: (method, url) => {
      const query = url.indexOf("?")
      const path = query === -1 ? url : url.slice(0, query)
      for (const route of compiled) {
        if (route.method === method && route.regex.test(path)) return route.kind
      }
      return "public"
    }
  }
}

export type TrustedProxies = ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>

const parseAddress = (text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined => {
  const trimmed = text.trim()
  // Bracketed IPv6 and IPv4 with a port are what some proxies write.
  const bare = trimmed.startsWith("[") && trimmed.includes("]")
    ? trimmed.slice(1, trimmed.indexOf("]"))
    : /^\d+\.\d+\.\d+\.\d+:\d+$/.test(trimmed)
    ? trimmed.slice(0, trimmed.lastIndexOf(":"))
    : trimmed
  // `ipaddr.isValid` accepts 0177.1 and 2130706433 as IPv4; only the four-part decimal form is an address here.
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare)
  if (ipaddr.IPv6.isValid(bare)) return ipaddr.process(bare)
  return undefined
}

/** The settings' proxy list as ranges; an entry that is no address or CIDR range is refused. */
export const parseTrustedProxies = (entries: ReadonlyArray<string>): Either.Either<TrustedProxies, string> => {
  const ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = []
  for (const raw of entries) {
    const entry = raw.trim()
    if (entry.length === 0) continue
    const slash = entry.indexOf("/")
    const address = parseAddress(slash === -1 ? entry : entry.slice(0, slash))
    const bits = slash === -1 ? undefined : Number(entry.slice(slash + 1))
    const max = address?.kind() === "ipv4" ? 32 : 128
    if (address === undefined || (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= max))) {
      return Either.left(`Expected an IP address or CIDR range, got ${entry}`)
    }
    ranges.push([address, bits ?? max])
  }
  return Either.right(ranges)
}

const trusted = (address: ipaddr.IPv4 | ipaddr.IPv6, proxies: TrustedProxies) =>
  proxies.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits))

/**
 * The client's address: the socket's peer unless that peer is a trusted
 * proxy; then `X-Forwarded-For` is read from the right, each trusted hop
 * skipped, and the first untrusted address is the client. A client can put
 * anything at the left of the header, so nothing left of the first untrusted
 * hop is believed; a hop that is no address stops the walk at the last
 * trusted one.
 */
export const clientAddress = (
  remote: string | undefined,
  forwardedFor: string | undefined,
  proxies: TrustedProxies
): string | undefined => {
  if (remote === undefined) return undefined
  const peer = parseAddress(remote)
  if (peer === undefined) return remote
  let client = peer
  if (proxies.length === 0 || !trusted(peer, proxies) || forwardedFor === undefined) return client.toString()
  const hops = forwardedFor.split(",")
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseAddress(hops[i]!)
    if (hop === undefined) break
    client = hop
    if (!trusted(hop, proxies)) break
  }
  return client.toString()
}

/**
 * The budget key of an address. IPv6 clients are counted per /64: one
 * subscriber usually holds a whole /64, so counting single addresses would
 * give it billions of budgets. IPv4-mapped IPv6 is its IPv4 address.
 */
export const addressKey = (address: string | undefined): string => {
  const parsed = address === undefined ? undefined : parseAddress(address)
  if (parsed === undefined) return `address:${address ?? "unknown"}`
  if (parsed.kind() === "ipv4") return `address:${parsed.toString()}`
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(":")
  return `address:${prefix}::/64`
}

/**
 * The budget key of a credential: a hash of the token presented, so a
 * session's cookie and its bearer form share one budget and the key holds no
 * token. Domain-separated from the credential store's own hash.
 */
export const credentialKey = (token: string): string =>
  `credential:${createHash("sha256").update(`clark-rate-limit:${token}`, "utf8").digest("hex")}`

/** Whole seconds, rounded up: a client that waits this long is never early. */
const seconds = (millis: number) => Math.max(0, Math.ceil(millis / 1000))

/** The headers of a counted request that was let through. */
export const allowedHeaders = (limit: number, remaining: number, resetMillis: number): Record<string, string> => ({
  "ratelimit-limit": String(limit),
  "ratelimit-remaining": String(Math.max(0, remaining)),
  "ratelimit-reset": String(seconds(resetMillis))
})

/**
 * The headers of a refusal. In a fixed window the budget is whole again when
 * the window ends, so `Retry-After` and `RateLimit-Reset` are the same time,
 * at least one second.
 */
export const refusedHeaders = (limit: number, retryAfterMillis: number): Record<string, string> => {
  const wait = String(Math.max(1, seconds(retryAfterMillis)))
  return {
    "retry-after": wait,
    "ratelimit-limit": String(limit),
    "ratelimit-remaining": "0",
    "ratelimit-reset": wait
  }
}

/**
 * Whether an idempotency key already has a record for the user: such a
 * request is answered from the record (the replay, or 409/422) and changes
 * nothing, so it spends no budget.
 */
export class ReplayCheck extends Context.Tag("clark/marketplace/ReplayCheck")<ReplayCheck, {
  readonly recorded: (userId: string, key: string) => Effect.Effect<boolean>
}>() {}
