/** MARKETPLACE_DATABASE_POOL: PostgreSQL connections per server, its default and its refusals. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { PoolSizeConfig } from "../../layers/marketplace/sql/Database.js"

const read = (env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(PoolSizeConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))

describe("MARKETPLACE_DATABASE_POOL", () => {
  it("defaults to 6 connections and takes a whole number from 1 to 100", () => {
    expect(read({})).toEqual(Either.right(6))
    expect(read({ MARKETPLACE_DATABASE_POOL: "1" })).toEqual(Either.right(1))
    expect(read({ MARKETPLACE_DATABASE_POOL: "24" })).toEqual(Either.right(24))
    expect(read({ MARKETPLACE_DATABASE_POOL: "100" })).toEqual(Either.right(100))
  })

  it.each(["0", "101", "-3", "2.5", "six", ""])("refuses %j, naming the setting", (value) => {
    const result = read({ MARKETPLACE_DATABASE_POOL: value })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) expect(String(result.left)).toContain("MARKETPLACE_DATABASE_POOL")
  })
})
