/**
 * The pure rules of package credentials and connections, table by table: canonical names (and the map key
 * under every spelling), the secret names and variables, which manifests consume the map key, grants from a
 * listing, reading a callback, when a spent state holds, and the callback URL built from a Host.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Option, Redacted } from "effect"
import type { Manifest } from "../../../schema/node/Manifest.js"
import {
  type CallbackParams,
  callbackUrlFor,
  providerAnswer,
  readCallback,
  stateHolds,
  statusOfOutcome
} from "../../../services/node/Connections.js"
import {
  canonicalName,
  consumesTileKey,
  grantsOf,
  secretNameOf,
  secretPrefix,
  variableOf
} from "../../../services/node/PackageCredentials.js"

describe("canonicalName", () => {
  const accepted: ReadonlyArray<readonly [string, string]> = [
    ["api_token", "api_token"],
    ["API-Token", "api_token"],
    [" api.token ", "api_token"],
    ["connection:code", "connection_code"],
    ["ａｐｉ", "api"],
    ["a", "a"],
    ["a".repeat(53), "a".repeat(53)],
    ["token2", "token2"]
  ]
  it.each(accepted)("%j → %s", (given, name) => {
    expect(canonicalName(given)).toEqual(Either.right(name))
  })

  const refused: ReadonlyArray<readonly [string, string]> = [
    ["maps:tiles", "SecretNameReserved"],
    ["MAPS:TILES ", "SecretNameReserved"],
    ["maps\uFF1Atiles", "SecretNameReserved"],
    ["maps-tiles", "SecretNameReserved"],
    ["maps_tiles", "SecretNameReserved"],
    ["", "CredentialNameInvalid"],
    ["   ", "CredentialNameInvalid"],
    ["a".repeat(54), "CredentialNameInvalid"],
    ["9lives", "CredentialNameInvalid"],
    ["_token", "CredentialNameInvalid"],
    ["api token", "CredentialNameInvalid"],
    ["api/token", "CredentialNameInvalid"],
    ["tökén", "CredentialNameInvalid"],
    ["tok\nen", "CredentialNameInvalid"]
  ]
  it.each(refused)("%j is refused (%s)", (given, tag) => {
    const result = canonicalName(given)
    expect(Either.isLeft(result) && result.left._tag).toBe(tag)
  })

  it("the problem says which rule, and a 53-character name makes a 64-character variable", () => {
    expect(Either.getLeft(canonicalName("a".repeat(54))).pipe(Option.map((e) => (e as any).problem))).toEqual(Option.some("length"))
    expect(Either.getLeft(canonicalName("9")).pipe(Option.map((e) => (e as any).problem))).toEqual(Option.some("characters"))
    expect(variableOf("a".repeat(53))).toHaveLength(64)
  })
})

describe("secret names and variables", () => {
  it.each([
    ["weather", "api_token", "package:weather:api_token", "CREDENTIAL_API_TOKEN"],
    ["@acme/weather", "token", "package:%40acme%2Fweather:token", "CREDENTIAL_TOKEN"],
    ["odd:id", "token", "package:odd%3Aid:token", "CREDENTIAL_TOKEN"]
  ])("%s / %s → %s as %s", (packageId, name, secretName, variable) => {
    expect(secretNameOf(packageId, name)).toBe(secretName)
    expect(secretName.startsWith(secretPrefix(packageId))).toBe(true)
    expect(variableOf(name)).toBe(variable)
  })
})

const manifest = (permissions: Manifest["permissions"]): Manifest => ({
  manifestVersion: 1,
  facets: [{ kind: "theme", isolation: "declarative", renderer: null, entry: "themes/a.json", widgetId: null }],
  permissions,
  tools: [],
  widgets: [],
  themes: [],
  skills: []
})

describe("consumesTileKey", () => {
  it.each([
    [[], false],
    [[{ kind: "capability", value: "maps:tiles", access: "read" }], true],
    [[{ kind: "capability", value: " Maps:Tiles", access: null }], true],
    [[{ kind: "network", value: "maps:tiles", access: null }], true],
    [[{ kind: "capability", value: "maps", access: null }, { kind: "capability", value: "maps:tiles:extra", access: null }], false],
    [[{ kind: "network", value: "tiles.example.com", access: null }], false]
  ] as const)("%j → %s", (permissions, consumes) => {
    expect(consumesTileKey(manifest(permissions as Manifest["permissions"]))).toBe(consumes)
  })
})

describe("grantsOf", () => {
  const secret = (value: string) => ({ value: Redacted.make(value) })
  const listed = [
    { name: "maps:tiles", secret: secret("map-key") },
    { name: "package:%40acme%2Fweather:api_token", secret: secret("weather-token") },
    { name: "package:%40acme%2Fweather:region", secret: secret("weather-region") },
    { name: "package:%40acme%2Fweather-pro:api_token", secret: secret("pro-token") },
    { name: "package:%40acme%2Fweather:Not_Canonical", secret: secret("odd") },
    { name: "package:%40acme%2Fweather:a:b", secret: secret("odd-2") }
  ]
  const plain = (grants: Record<string, Redacted.Redacted<string>>) =>
    Object.fromEntries(Object.entries(grants).map(([name, value]) => [name, Redacted.value(value)]))

  it("gives a package only its own canonical credentials, as variables", () => {
    expect(plain(grantsOf("@acme/weather", listed))).toEqual({
      CREDENTIAL_API_TOKEN: "weather-token",
      CREDENTIAL_REGION: "weather-region"
    })
    expect(plain(grantsOf("@acme/weather-pro", listed))).toEqual({ CREDENTIAL_API_TOKEN: "pro-token" })
    expect(plain(grantsOf("@acme/other", listed))).toEqual({})
    // An id that is a prefix of another's, or the map key's name, gets nothing of theirs.
    expect(plain(grantsOf("@acme/weath", listed))).toEqual({})
    expect(plain(grantsOf("maps", listed))).toEqual({})
  })
})

describe("reading a callback", () => {
  const cases: ReadonlyArray<readonly [string, CallbackParams, ReturnType<typeof readCallback>]> = [
    ["state and code", { state: "s", code: "c" }, { kind: "read", state: "s", code: "c", error: undefined }],
    ["state and error", { state: "s", error: "access_denied" }, { kind: "read", state: "s", code: undefined, error: "access_denied" }],
    ["empty code", { state: "s", code: "" }, { kind: "read", state: "s", code: undefined, error: undefined }],
    ["no state", { code: "c" }, { kind: "no-state" }],
    ["empty state", { state: "", code: "c" }, { kind: "no-state" }],
    ["repeated state", { state: ["a", "b"], code: "c" }, { kind: "malformed" }],
    ["repeated code", { state: "s", code: ["a", "b"] }, { kind: "malformed" }],
    ["code too long", { state: "s", code: "c".repeat(8193) }, { kind: "malformed" }],
    ["code at the limit", { state: "s", code: "c".repeat(8192) }, { kind: "read", state: "s", code: "c".repeat(8192), error: undefined }]
  ]
  it.each(cases)("%s", (_, params, read) => {
    expect(readCallback(params)).toEqual(read)
  })

  it("a provider's refusal wins over a code; no code and no error is incomplete", () => {
    expect(providerAnswer({ code: "c", error: "access_denied" })).toBe("declined")
    expect(providerAnswer({ code: undefined, error: undefined })).toBe("incomplete")
    expect(providerAnswer({ code: "c", error: undefined })).toBe("code")
  })
})

describe("stateHolds", () => {
  const issued = Option.some({ packageId: "weather", expiresAtMillis: 600_000 })
  it.each([
    ["in time, same package", issued, "weather", 0, true],
    ["a millisecond before expiry", issued, "weather", 599_999, true],
    ["at expiry", issued, "weather", 600_000, false],
    ["another package", issued, "other", 0, false],
    ["not held", Option.none(), "weather", 0, false]
  ] as const)("%s → %s", (_, state, packageId, now, holds) => {
    expect(stateHolds(state, packageId, now)).toBe(holds)
  })

  it("every outcome has a status the contract declares", () => {
    expect(new Set(Object.values(statusOfOutcome))).toEqual(new Set([200, 400, 404, 503]))
  })
})

describe("callbackUrlFor", () => {
  it.each([
    ["127.0.0.1:8788", "@acme/weather", Option.some("http://127.0.0.1:8788/connections/callback/%40acme%2Fweather")],
    ["localhost", "weather", Option.some("http://localhost/connections/callback/weather")],
    ["[::1]:8788", "weather", Option.some("http://[::1]:8788/connections/callback/weather")],
    ["node.local:80", "weather", Option.some("http://node.local:80/connections/callback/weather")],
    [undefined, "weather", Option.none()],
    ["", "weather", Option.none()],
    ["evil.example/x?", "weather", Option.none()],
    ["user@host", "weather", Option.none()],
    ["host:port", "weather", Option.none()],
    ["a b", "weather", Option.none()]
  ] as const)("Host %j → %s", (host, packageId, url) => {
    expect(callbackUrlFor(host, packageId)).toEqual(url)
  })
})
