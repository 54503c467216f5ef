/** The marketplace's settings from the environment: defaults, origins, read cache switch. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { listenOrigin, settingsConfig, SettingsConfig } from "../../src/marketplace/Settings.js"

const read = (env: Record<string, string>, config = SettingsConfig) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))))

describe("marketplace settings", () => {
  it("defaults the public and site origins and turns the read cache on", () => {
    expect(read({})).toEqual(Either.right({
      environment: "development",
      publicOrigin: "http://127.0.0.1:8787",
      siteOrigin: "http://127.0.0.1:8787",
      readCache: true
    }))
  })

  it("takes the site origin from the public origin unless set, and the cache switch", () => {
    const settings = read({
      MARKETPLACE_PUBLIC_ORIGIN: "https://api.market.example",
      MARKETPLACE_READ_CACHE: "off"
    })
    expect(settings).toMatchObject(Either.right({
      publicOrigin: "https://api.market.example",
      siteOrigin: "https://api.market.example",
      readCache: false
    }))
    expect(read({ MARKETPLACE_SITE_ORIGIN: "https://market.example" })).toMatchObject(
      Either.right({ siteOrigin: "https://market.example" })
    )
  })

  it.each([
    ["MARKETPLACE_PUBLIC_ORIGIN", "https://market.example/"],
    ["MARKETPLACE_PUBLIC_ORIGIN", "https://market.example/api"],
    ["MARKETPLACE_SITE_ORIGIN", "market.example"],
    ["MARKETPLACE_SITE_ORIGIN", "null"],
    ["MARKETPLACE_READ_CACHE", "maybe"]
  ])("refuses %s=%s", (name, value) => {
    expect(Either.isLeft(read({ [name]: value }))).toBe(true)
  })

  it("defaults the public origin to the address MARKETPLACE_HOST and MARKETPLACE_PORT name", () => {
    expect(read({ MARKETPLACE_HOST: "0.0.0.0", MARKETPLACE_PORT: "9000" })).toMatchObject(
      Either.right({ publicOrigin: "http://localhost:9000", siteOrigin: "http://localhost:9000" })
    )
  })

  it("defaults the public origin to the bound address when one is given, MARKETPLACE_PUBLIC_ORIGIN winning", () => {
    const bound = settingsConfig("http://127.0.0.1:41234")
    expect(read({ MARKETPLACE_PORT: "9000" }, bound)).toMatchObject(Either.right({ publicOrigin: "http://127.0.0.1:41234" }))
    expect(read({ MARKETPLACE_PUBLIC_ORIGIN: "https://market.example" }, bound)).toMatchObject(
      Either.right({ publicOrigin: "https://market.example" })
    )
    // Set but invalid is refused, not replaced by the default.
    expect(Either.isLeft(read({ MARKETPLACE_PUBLIC_ORIGIN: "market.example" }, bound))).toBe(true)
  })

  it.each([
    ["127.0.0.1", 8787, "http://127.0.0.1:8787"],
    ["0.0.0.0", 80, "http://localhost"],
    ["::", 8787, "http://localhost:8787"],
    ["::1", 8787, "http://[::1]:8787"],
    ["market.internal", 3000, "http://market.internal:3000"]
  ])("names a server bound to %s port %i as %s", (host, port, origin) => {
    expect(listenOrigin(host, port)).toBe(origin)
    expect(new URL(origin).origin).toBe(origin)
  })
})
