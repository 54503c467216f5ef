/** The rules of rate limiting: client address, budget keys, route kinds, headers, settings, one credential check. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Exit, Layer, Redacted, Ref } from "effect"
import { Unauthorized } from "../../schema/marketplace/Errors.js"
import { Authentication, type Credential } from "../../schema/marketplace/Security.js"
import { authenticateOnce, CheckedCredential } from "../../src/marketplace/http/RateLimiting.js"
import { RateLimitsConfig } from "../../src/marketplace/Settings.js"
import {
  addressKey,
  allowedHeaders,
  clientAddress,
  credentialKey,
  defaultRateLimits,
  parseTrustedProxies,
  refusedHeaders,
  routeTable
} from "../../services/marketplace/RateLimits.js"

const proxies = (...entries: Array<string>) => Either.getOrThrow(parseTrustedProxies(entries))

describe("client address", () => {
  it.each([
    ["no proxy trusted: the socket's peer, whatever the header says", "203.0.113.9", "198.51.100.1", [], "203.0.113.9"],
    ["a trusted proxy: the address it appended", "10.1.2.3", "198.51.100.1", ["10.0.0.0/8"], "198.51.100.1"],
    ["what the client wrote left of it is not believed", "10.1.2.3", "1.1.1.1, 198.51.100.1", ["10.0.0.0/8"], "198.51.100.1"],
    ["trusted hops are skipped from the right", "10.1.2.3", "198.51.100.1, 10.9.9.9", ["10.0.0.0/8"], "198.51.100.1"],
    ["an untrusted peer's header is ignored", "192.0.2.7", "198.51.100.1", ["10.0.0.0/8"], "192.0.2.7"],
    ["a trusted peer without the header is the client", "10.1.2.3", undefined, ["10.0.0.0/8"], "10.1.2.3"],
    ["a hop that is no address stops at the last trusted one", "10.1.2.3", "198.51.100.1, junk", ["10.0.0.0/8"], "10.1.2.3"],
    ["only trusted hops: the leftmost", "10.1.2.3", "10.4.4.4, 10.5.5.5", ["10.0.0.0/8"], "10.4.4.4"],
    ["an IPv4-mapped peer is its IPv4 address", "::ffff:10.1.2.3", "198.51.100.1", ["10.1.2.3"], "198.51.100.1"],
    ["IPv6 proxies and clients", "fd00::1", "2001:db8::5", ["fd00::/8"], "2001:db8::5"],
    ["a hop with a port", "10.1.2.3", "198.51.100.1:4711", ["10.0.0.0/8"], "198.51.100.1"],
    ["a bracketed IPv6 hop", "10.1.2.3", "[2001:db8::5]:4711", ["10.0.0.0/8"], "2001:db8::5"],
    ["octal-looking text is no address", "10.1.2.3", "0177.0.0.1", ["10.0.0.0/8"], "10.1.2.3"]
  ])("%s", (_, remote, forwarded, trusted, expected) => {
    expect(clientAddress(remote, forwarded, proxies(...trusted))).toBe(expected)
  })

  it("is unknown without a socket address", () => {
    expect(clientAddress(undefined, "198.51.100.1", proxies("10.0.0.0/8"))).toBeUndefined()
  })
})

describe("budget keys", () => {
  it.each([
    ["198.51.100.1", "address:198.51.100.1"],
    ["::ffff:198.51.100.1", "address:198.51.100.1"],
    ["2001:db8:1:2:aaaa::1", "address:2001:db8:1:2::/64"],
    ["2001:db8:1:2:bbbb::9", "address:2001:db8:1:2::/64"],
    [undefined, "address:unknown"]
  ])("%s spends %s", (address, key) => {
    expect(addressKey(address)).toBe(key)
  })

  it("keys a credential by a hash that holds no part of the token", () => {
    const token = "cms_abcdefghijklmnopqrstuvwxyz012345abcdef"
    expect(credentialKey(token)).toBe(credentialKey(token))
    expect(credentialKey(token)).not.toBe(credentialKey(`${token}x`))
    expect(credentialKey(token)).toMatch(/^credential:[0-9a-f]{64}$/)
    expect(credentialKey(token)).not.toContain("abcdefghij")
  })
})

describe("trusted proxies", () => {
  it.each([["10.0.0.0/8"], ["10.1.2.3"], ["fd00::/8"], ["::1"], [" 10.0.0.0/8 "]])("accepts %s", (entry) => {
    expect(Either.isRight(parseTrustedProxies([entry]))).toBe(true)
  })
  it.each([["10.0.0.0/33"], ["fd00::/129"], ["ingress"], ["10.0.0.0/x"], ["0177.0.0.1"]])("refuses %s", (entry) => {
    expect(Either.isLeft(parseTrustedProxies([entry]))).toBe(true)
  })
})

describe("route kinds", () => {
  const table = routeTable([
    { method: "GET", path: "/api/v1/health", kind: "exempt" },
    { method: "GET", path: "/api/v1/packages/:name", kind: "public" },
    { method: "GET", path: "/api/v1/me", kind: "authenticated" },
    { method: "POST", path: "/api/v1/curation/packages/:name/status", kind: "authenticated" }
  ])
  it.each([
    ["GET", "/api/v1/health", "exempt"],
    ["GET", "/api/v1/health?verbose=1", "exempt"],
    ["POST", "/api/v1/health", "public"],
    ["GET", "/api/v1/healthz", "public"],
    ["GET", "/api/v1/packages/%40scope%2Fname", "public"],
    ["GET", "/api/v1/me", "authenticated"],
    ["POST", "/api/v1/curation/packages/left-pad/status", "authenticated"],
    ["POST", "/api/v1/curation/packages/a/b/status", "public"],
    ["GET", "/nowhere", "public"]
  ])("%s %s spends %s", (method, url, kind) => {
    expect(table.classify(method, url)).toBe(kind)
  })
})

describe("headers", () => {
  it.each([
    [[600, 599, 59_001], { "ratelimit-limit": "600", "ratelimit-remaining": "599", "ratelimit-reset": "60" }],
    [[3, 0, 1], { "ratelimit-limit": "3", "ratelimit-remaining": "0", "ratelimit-reset": "1" }],
    [[3, -1, 0], { "ratelimit-limit": "3", "ratelimit-remaining": "0", "ratelimit-reset": "0" }]
  ] as const)("allowed %j", ([limit, remaining, reset], headers) => {
    expect(allowedHeaders(limit, remaining, reset)).toEqual(headers)
  })

  it.each([
    [55_000, "55"],
    [54_001, "55"],
    [10, "1"],
    [0, "1"]
  ])("refused after %i ms: retry after %s s", (millis, seconds) => {
    expect(refusedHeaders(3, millis)).toEqual({
      "retry-after": seconds,
      "ratelimit-limit": "3",
      "ratelimit-remaining": "0",
      "ratelimit-reset": seconds
    })
  })
})

describe("settings", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSync(
      Effect.either(Effect.withConfigProvider(RateLimitsConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))
    )

  it("defaults to 600 requests a minute per address and per credential, shared, no trusted proxy", () => {
    expect(read({})).toEqual(Either.right(defaultRateLimits))
    expect(defaultRateLimits).toEqual({
      enabled: true,
      publicLimit: 600,
      authenticatedLimit: 600,
      windowSeconds: 60,
      trustedProxies: [],
      store: "shared"
    })
  })

  it("reads every setting", () => {
    expect(read({
      MARKETPLACE_RATE_LIMITS: "off",
      MARKETPLACE_RATE_LIMIT_PUBLIC: "100",
      MARKETPLACE_RATE_LIMIT_AUTHENTICATED: "1000",
      MARKETPLACE_RATE_LIMIT_WINDOW_SECONDS: "300",
      MARKETPLACE_TRUSTED_PROXIES: "10.0.0.0/8, fd00::/8",
      MARKETPLACE_RATE_LIMIT_STORE: "per-replica"
    })).toEqual(Either.right({
      enabled: false,
      publicLimit: 100,
      authenticatedLimit: 1000,
      windowSeconds: 300,
      trustedProxies: ["10.0.0.0/8", "fd00::/8"],
      store: "per-replica"
    }))
  })

  it.each([
    ["MARKETPLACE_RATE_LIMITS", "maybe"],
    ["MARKETPLACE_RATE_LIMIT_PUBLIC", "0"],
    ["MARKETPLACE_RATE_LIMIT_AUTHENTICATED", "1.5"],
    ["MARKETPLACE_RATE_LIMIT_WINDOW_SECONDS", "-1"],
    ["MARKETPLACE_TRUSTED_PROXIES", "10.0.0.0/8,ingress"],
    ["MARKETPLACE_RATE_LIMIT_STORE", "redis"]
  ])("refuses %s=%s", (name, value) => {
    expect(Either.isLeft(read({ [name]: value }))).toBe(true)
  })
})

describe("the credential check made once", () => {
  const credential: Credential = { userId: "usr_1", role: "user", scopes: [], kind: "session", viaCookie: false }
  const counting = Effect.gen(function*() {
    const calls = yield* Ref.make(0)
    const inner = Layer.succeed(
      Authentication,
      Authentication.of({
        bearer: () => Effect.as(Ref.update(calls, (n) => n + 1), credential),
        cookie: () => Effect.zipRight(Ref.update(calls, (n) => n + 1), Effect.fail(new Unauthorized({ message: "no" })))
      })
    )
    const authentication = yield* Effect.provide(Authentication, authenticateOnce(inner))
    return { authentication, calls }
  })

  it.effect("answers from the limiter's outcome without asking the credential store again", () =>
    Effect.gen(function*() {
      const { authentication, calls } = yield* counting
      const refused = Exit.fail(new Unauthorized({ message: "refused by the limiter's check" }))
      // The Tag types it as needing the router's request context; neither implementation here reads it.
      const bearer = authentication.bearer(Redacted.make("cms_x")) as Effect.Effect<Credential, unknown>
      expect(yield* Effect.flip(Effect.provideService(bearer, CheckedCredential, refused))).toBeInstanceOf(Unauthorized)
      expect(yield* Effect.provideService(bearer, CheckedCredential, Exit.succeed(credential))).toEqual(credential)
      expect(yield* Ref.get(calls)).toBe(0)
      // Without the limiter's outcome (limits off, or a route it did not classify) it asks as before.
      expect(yield* bearer).toEqual(credential)
      expect(yield* Ref.get(calls)).toBe(1)
    }))
})
