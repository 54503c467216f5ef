/**
 * The real `clark market publisher …`, end to end (see MarketFixture.ts), against a marketplace whose
 * registry is the local stand-in: a publisher created, shown, renamed, a member added and removed, the
 * verification token printed and a check refused (a loopback homepage is never fetched), a package claimed
 * because its manifest names the publisher; refusals as one `code: message` line.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import * as SqlCredentials from "../../layers/marketplace/sql/SqlCredentials.js"
import { Credentials } from "../../services/marketplace/Credentials.js"
import { packClark } from "../support/registry/ClarkPackages.js"
import * as Registry from "../support/registry/Registry.js"
import { clark, expectFailure, server, slow, useMarketplace } from "./MarketFixture.js"

const scope = Effect.runSync(Scope.make())

// Before the server starts (hooks run in order): its publisher checks read the registry's URL when built.
beforeAll(async () => {
  const registry = await Effect.runPromise(Scope.extend(Registry.start, scope))
  registry.publish({
    name: "alpha-tool",
    version: "0.1.0",
    tarball: await packClark({ name: "alpha-tool", version: "0.1.0" }),
    manifest: { clark: { manifestVersion: 1, publisher: "cli-pub" } }
  })
  process.env.MARKETPLACE_REGISTRY_URL = registry.url
  return async () => {
    delete process.env.MARKETPLACE_REGISTRY_URL
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
})

useMarketplace()

/** A user's token with the publisher scopes, and its id. */
const publisherUser = (email: string) =>
  server.query(Effect.gen(function*() {
    const credentials = yield* Credentials
    const profile = yield* credentials.createUser({ email, name: email.split("@")[0]!, role: "user" })
    const token = Redacted.value(yield* credentials.issueApiToken({ email, scopes: ["publishers:read", "publishers:write"] }))
    return { id: profile.id, token }
  }).pipe(Effect.provide(SqlCredentials.layer), Effect.orDie))

describe("clark market publisher", () => {
  it("creates, shows and renames a publisher, manages its members, verifies and claims", async () => {
    const owner = await publisherUser("cli-owner@example.com")
    const other = await publisherUser("cli-other@example.com")
    const as = (token: string) => (args: ReadonlyArray<string>) => clark(["publisher", ...args, "--token", token])
    const mine = as(owner.token)

    const created = await mine(["create", "cli-pub", "--name", "CLI Pub", "--homepage", "https://127.0.0.1:9/"])
    expect(created.code).toBe(0)
    expect(created.stdout).toMatch(/^slug +cli-pub$/m)
    expect(created.stdout).toMatch(/^verified +no$/m)
    expect(created.stdout).toMatch(/^your role +owner$/m)
    expect(created.stdout).toContain(`${owner.id}  cli-owner@example.com  owner`)
    expectFailure(await mine(["create", "cli-pub", "--name", "Again"]), "conflict")

    const renamed = await mine(["update", "cli-pub", "--name", "CLI Publisher"])
    expect(renamed.code).toBe(0)
    expect(renamed.stdout).toMatch(/^name +CLI Publisher$/m)

    const added = await mine(["members", "add", "cli-pub", "cli-other@example.com"])
    expect(added.code).toBe(0)
    expect(added.stdout).toContain(`${other.id}  cli-other@example.com  member`)
    // A member does no owner's part; the only owner cannot leave.
    expectFailure(await as(other.token)(["update", "cli-pub", "--name", "Mine"]), "forbidden")
    expectFailure(await mine(["members", "remove", "cli-pub", owner.id]), "conflict")
    const removed = await mine(["members", "remove", "cli-pub", other.id])
    expect(removed.code).toBe(0)
    expect(removed.stdout).not.toContain(other.id)

    const challenge = await mine(["verify", "cli-pub"])
    expect(challenge.code).toBe(0)
    expect(challenge.stdout).toMatch(/^token +clark-publisher-[A-Za-z0-9_-]{32}$/m)
    expect(challenge.stdout).toContain("https://127.0.0.1/.well-known/clark-publisher.txt")
    expect(challenge.stdout).toContain("_clark-publisher.127.0.0.1")
    const refused = await mine(["verify", "cli-pub", "--method", "well-known"])
    expectFailure(refused, "conflict")
    expect(refused.stderr).toContain("127.0.0.1 is a loopback, private, link-local or reserved address")

    const claimed = await mine(["claim", "cli-pub", "alpha-tool"])
    expect(claimed.code).toBe(0)
    expect(claimed.stdout).toBe("claimed alpha-tool for cli-pub (manifest)\n")
    expect((await mine(["claims", "cli-pub"])).stdout).toMatch(/^alpha-tool {2}cli-pub {2}manifest {2}\S+\n$/)
    expectFailure(await mine(["claim", "cli-pub", "beta-tool"]), "not_found")
    const listed = await mine(["list"])
    expect(listed.stdout).toMatch(/^cli-pub +CLI Publisher +no +owner +1$/m)
  }, slow)
})
