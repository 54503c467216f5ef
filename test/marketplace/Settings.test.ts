/** The marketplace's settings from the environment: defaults, origins, read cache switch. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { SettingsConfig } from "../../src/marketplace/Settings.js"

const read = (env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(SettingsConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))

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
})
