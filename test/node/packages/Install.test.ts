/**
 * Installing packages from local folders through the real node on real folders and a real package cache:
 * the install rules in the spec's order, the install approval's states (on the test clock), the event stream,
 * and what a restart keeps.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { query, typedClient, wire } from "../../support/NodeFixtures.js"

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../examples/packages")

/** A copy of an example package in a folder of its own, so a test may change it. */
const copyOf = (name: string) => {
  const target = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clark-pkg-")), name)
  fs.cpSync(path.join(examples, name), target, { recursive: true })
  return target
}

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>, dataDir?: string) =>
  Effect.provide(effect, NodeServer.layer(dataDir === undefined ? {} : { dataDir }))

const person = typedClient("person")
const cli = typedClient("cli-api")

/** Adds the folder to the directory and answers its listing. */
const listed = (folder: string) => Effect.flatMap(person, (client) => Effect.orDie(client.packages.addLocal({ payload: { path: folder } })))

const install = (packageId: string, localDigest?: string, as: NodeServer.As = "person") =>
  Effect.flatMap(typedClient(as), (client) =>
    Effect.orDie(wire(client.packages.install({
      payload: { packageId, ...(localDigest === undefined ? {} : { localDigest }) },
      withResponse: true
    }))))

const decide = (approvalId: string, decision: "granted" | "denied", digest: string) =>
  Effect.flatMap(person, (client) =>
    Effect.orDie(wire(client.packages.decideApproval({ path: { approvalId }, payload: { decision, digest }, withResponse: true }))))

const approval = (approvalId: string) =>
  Effect.flatMap(person, (client) => Effect.orDie(client.packages.approval({ path: { approvalId } })))

const events = Effect.flatMap(person, (client) => Effect.orDie(client.packages.approvalEvents({ urlParams: {} })))

const installedRows = (dataDir: string) => query(dataDir, "SELECT package_id, version, digest FROM installed_packages")

describe("the directory", () => {
  it.scoped("lists a local folder with the digest the node computed, and no marketplace when none is set", () =>
    withNode(Effect.gen(function*() {
      const folder = copyOf("harbour-theme")
      const listing = yield* listed(folder)
      expect(listing).toMatchObject({
        packageId: "@clark-examples/harbour-theme",
        source: "local",
        version: "1.0.0",
        path: folder,
        installed: null
      })
      expect(listing.contentDigest).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(listing.digest).toBe(listing.contentDigest)
      const client = yield* person
      const directory = yield* client.packages.directory({ urlParams: {} })
      expect(directory.marketplace).toEqual({ status: "not-configured", url: null })
      expect(directory.packages.map((p) => p.packageId)).toEqual(["@clark-examples/harbour-theme"])
      expect((yield* client.packages.directory({ urlParams: { q: "no such words" } })).packages).toEqual([])
      // A byte changed on disk shows in the next listing.
      fs.appendFileSync(path.join(folder, "skills/release-notes.md"), "\n4. Thank the contributors.\n")
      const again = yield* client.packages.listing({ path: { packageId: listing.packageId } })
      expect(again.contentDigest).not.toBe(listing.contentDigest)
    })))

  it.scoped("refuses a folder with a link, a relative path, and a package.json that is not a Clark package", () =>
    withNode(Effect.gen(function*() {
      const client = yield* person
      const linked = copyOf("harbour-theme")
      fs.symlinkSync("/etc/hostname", path.join(linked, "skills/hostname"))
      const refused = yield* Effect.flip(client.packages.addLocal({ payload: { path: linked } }))
      expect(refused).toMatchObject({ code: "LOCAL_SOURCE_UNREADABLE", members: { reason: "link", path: "skills/hostname" } })
      const relative = yield* Effect.flip(client.packages.addLocal({ payload: { path: "examples/packages/harbour-theme" } }))
      expect(relative).toMatchObject({ code: "LOCAL_SOURCE_UNREADABLE", members: { reason: "not-a-folder" } })
      const plain = copyOf("harbour-theme")
      const pkg = JSON.parse(fs.readFileSync(path.join(plain, "package.json"), "utf8"))
      pkg.clark.manifestVersion = 2
      fs.writeFileSync(path.join(plain, "package.json"), JSON.stringify(pkg))
      const unsupported = yield* Effect.flip(client.packages.addLocal({ payload: { path: plain } }))
      expect(unsupported).toMatchObject({ code: "LOCAL_SOURCE_UNREADABLE", members: { reason: "manifest-version" } })
      expect((yield* client.packages.directory({ urlParams: {} })).packages).toEqual([])
    })))
})

describe("POST /packages/install from a local folder", () => {
  it.scoped("installs a declarative package at once, from a read-only copy in the cache", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const listing = yield* listed(copyOf("harbour-theme"))
      const response = yield* install(listing.packageId, listing.contentDigest!)
      expect(response).toEqual({
        status: 200,
        body: {
          outcome: "installed",
          packageId: listing.packageId,
          version: "1.0.0",
          digest: listing.contentDigest,
          pendingCapabilities: 0,
          deniedCapabilities: 0
        }
      })
      const entry = path.join(node.dataDir, "packages", listing.contentDigest!.slice("sha256:".length))
      expect(fs.readFileSync(path.join(entry, "themes/harbour.json"), "utf8")).toContain("Harbour")
      expect(fs.statSync(path.join(entry, "themes/harbour.json")).mode & 0o222).toBe(0)
      const client = yield* person
      expect((yield* client.packages.listing({ path: { packageId: listing.packageId } })).installed).toMatchObject({
        version: "1.0.0",
        digest: listing.contentDigest,
        current: true
      })
      // A direct install is not an approval: the approval stream stays empty.
      expect((yield* events).events).toEqual([])
    })))

  it.scoped("rule 1: files changed since the listing are 409 DIGEST_MISMATCH, nothing installed or asked", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const folder = copyOf("tide-widget")
      const listing = yield* listed(folder)
      fs.writeFileSync(path.join(folder, "widget/index.html"), "<p>changed</p>")
      const response = yield* install(listing.packageId, listing.contentDigest!)
      expect(response.status).toBe(409)
      expect(response.body).toMatchObject({ code: "DIGEST_MISMATCH", expected: listing.contentDigest })
      expect(installedRows(node.dataDir)).toEqual([])
      expect(query(node.dataDir, "SELECT * FROM install_approvals")).toEqual([])
      expect(fs.readdirSync(path.join(node.dataDir, "packages"))).toEqual([])
    })))

  it.scoped("a local listing needs its localDigest, and an unknown package is 404", () =>
    withNode(Effect.gen(function*() {
      const listing = yield* listed(copyOf("harbour-theme"))
      expect(yield* install(listing.packageId)).toMatchObject({ status: 400, body: { code: "INVALID_INPUT", field: "localDigest" } })
      expect(yield* install("@clark-examples/nothing", listing.contentDigest!)).toMatchObject({
        status: 404,
        body: { code: "RESOURCE_NOT_FOUND" }
      })
    })))

  it.scoped("rule 3: a link added after the listing is 400 LOCAL_SOURCE_UNREADABLE", () =>
    withNode(Effect.gen(function*() {
      const folder = copyOf("harbour-theme")
      const listing = yield* listed(folder)
      fs.linkSync(path.join(folder, "package.json"), path.join(folder, "again.json"))
      expect(yield* install(listing.packageId, listing.contentDigest!)).toMatchObject({
        status: 400,
        body: { code: "LOCAL_SOURCE_UNREADABLE", reason: "link" }
      })
    })))

  it.scoped("rule 4: a cache that cannot be written is 503 PACKAGE_CACHE_UNAVAILABLE and the user's files are unchanged", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const folder = copyOf("harbour-theme")
      const before = fs.readdirSync(folder, { recursive: true }).sort()
      const listing = yield* listed(folder)
      fs.writeFileSync(path.join(node.dataDir, "packages"), "a file where the cache should be")
      expect(yield* install(listing.packageId, listing.contentDigest!)).toMatchObject({
        status: 503,
        body: { code: "PACKAGE_CACHE_UNAVAILABLE" }
      })
      expect(fs.readdirSync(folder, { recursive: true }).sort()).toEqual(before)
      expect(installedRows(node.dataDir)).toEqual([])
    })))

  it.scoped("is person-only; a machine surface asks through /packages/install-requests, which always waits", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const listing = yield* listed(copyOf("harbour-theme"))
      expect(yield* install(listing.packageId, listing.contentDigest!, "cli-api")).toMatchObject({
        status: 403,
        body: { code: "PERSON_ONLY" }
      })
      const client = yield* cli
      const asked = yield* Effect.orDie(wire(client.packages.requestInstall({
        payload: { packageId: listing.packageId, localDigest: listing.contentDigest! },
        withResponse: true
      })))
      expect(asked).toMatchObject({ status: 202, body: { code: "APPROVAL_REQUIRED", approvalId: expect.stringMatching(/^apr_/) } })
      expect(yield* approval(asked.body.approvalId)).toMatchObject({ status: "waiting", askedBy: "cli-api", riskTier: "declarative" })
      expect(installedRows(node.dataDir)).toEqual([])
    })))

  it.scoped("execution.installs off refuses with 403 POLICY_REFUSED; only the person may change it", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const listing = yield* listed(copyOf("harbour-theme"))
      const machine = yield* cli
      const refused = yield* Effect.flip(machine.preferences.setInstallMode({ payload: { value: "ask-when-reaching-out" } }))
      expect(refused).toMatchObject({ code: "PERSON_ONLY" })
      const client = yield* person
      yield* client.preferences.setInstallMode({ payload: { value: "off" } })
      expect(yield* install(listing.packageId, listing.contentDigest!)).toMatchObject({ status: 403, body: { code: "POLICY_REFUSED" } })
      expect(installedRows(node.dataDir)).toEqual([])
      const invalid = yield* Effect.flip(client.preferences.setInstallMode({ payload: { value: "never" } }))
      expect(invalid).toMatchObject({ code: "PREFERENCE_INVALID" })
    })))
})

describe("install approvals", () => {
  /** A package with outside reach: installing it asks the person first. */
  const asked = Effect.gen(function*() {
    const folder = copyOf("tide-widget")
    const listing = yield* listed(folder)
    const response = yield* install(listing.packageId, listing.contentDigest!)
    expect(response.status).toBe(202)
    const waiting = yield* approval(response.body.approvalId)
    return { folder, listing, waiting }
  })

  it.scoped("asking waits with what it asks for; asking again reuses the waiting approval", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { listing, waiting } = yield* asked
      expect(waiting).toMatchObject({
        kind: "install-approval",
        packageId: "@clark-examples/tide-widget",
        source: "local",
        version: "1.0.0",
        status: "waiting",
        riskTier: "reaches-out",
        askedBy: "person",
        asksFor: [{ kind: "network", value: "tides.example.org", access: null }],
        decidedAt: null
      })
      expect(Date.parse(waiting.expiresAt) - Date.parse(waiting.requestedAt)).toBe(10 * 60 * 1000)
      expect(waiting.operationDigest).toMatch(/^sha256:/)
      expect(installedRows(node.dataDir)).toEqual([])
      const again = yield* install(listing.packageId, listing.contentDigest!)
      expect(again.body.approvalId).toBe(waiting.approvalId)
      expect((yield* events).events.map((e) => e.outcome)).toEqual(["asked"])
    })))

  it.scoped("a forged digest is refused; denied installs nothing; a second decision is refused", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { waiting } = yield* asked
      expect(yield* decide(waiting.approvalId, "granted", waiting.operationDigest.replace(/.$/, "0"))).toMatchObject({
        status: 403,
        body: { code: "APPROVAL_FORGED" }
      })
      expect((yield* approval(waiting.approvalId)).status).toBe("waiting")
      expect(yield* decide(waiting.approvalId, "denied", waiting.operationDigest)).toEqual({
        status: 200,
        body: { approvalId: waiting.approvalId, kind: "install", decision: "denied" }
      })
      expect(installedRows(node.dataDir)).toEqual([])
      expect(yield* decide(waiting.approvalId, "granted", waiting.operationDigest)).toMatchObject({
        status: 409,
        body: { code: "APPROVAL_ALREADY_DECIDED", status: "denied" }
      })
      expect((yield* events).events.map((e) => e.outcome)).toEqual(["asked", "denied"])
    })))

  it.scoped("granted installs exactly the approved bytes", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { listing, waiting } = yield* asked
      const granted = yield* decide(waiting.approvalId, "granted", waiting.operationDigest)
      expect(granted).toMatchObject({
        status: 200,
        body: { approvalId: waiting.approvalId, kind: "install", decision: "granted", installed: { digest: listing.contentDigest } }
      })
      expect(installedRows(node.dataDir)).toEqual([{ package_id: listing.packageId, version: "1.0.0", digest: listing.contentDigest }])
      expect((yield* approval(waiting.approvalId)).status).toBe("granted")
      const stream = (yield* events).events
      expect(stream.map((e) => [e.seq, e.outcome, e.approvalId])).toEqual([
        [1, "asked", waiting.approvalId],
        [2, "installed", waiting.approvalId]
      ])
      const client = yield* person
      expect((yield* client.packages.approvalEvents({ urlParams: { after: 1 } })).events.map((e) => e.outcome)).toEqual(["installed"])
    })))

  it.scoped("of 50 simultaneous grants exactly one installs; the others are already decided", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { waiting } = yield* asked
      // One client for all 50: making one reads the whole contract, and 50 made at once held the requests back
      // for seconds, long enough for an idle pooled connection to be closed under the first one.
      const client = yield* person
      const answers = yield* Effect.all(
        Array.from({ length: 50 }, () =>
          Effect.orDie(wire(client.packages.decideApproval({
            path: { approvalId: waiting.approvalId },
            payload: { decision: "granted", digest: waiting.operationDigest },
            withResponse: true
          })))),
        { concurrency: "unbounded" }
      )
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
      expect(answers.filter((a) => a.status === 409 && a.body.code === "APPROVAL_ALREADY_DECIDED")).toHaveLength(49)
      expect(installedRows(node.dataDir)).toHaveLength(1)
      expect((yield* events).events.map((e) => e.outcome)).toEqual(["asked", "installed"])
    })))

  it.scoped("local files changed since the question: 409 DIGEST_MISMATCH and it leaves the inbox", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { folder, waiting } = yield* asked
      fs.writeFileSync(path.join(folder, "widget/index.html"), "<p>swapped</p>")
      expect(yield* decide(waiting.approvalId, "granted", waiting.operationDigest)).toMatchObject({
        status: 409,
        body: { code: "DIGEST_MISMATCH" }
      })
      expect((yield* approval(waiting.approvalId)).status).toBe("refused")
      expect(installedRows(node.dataDir)).toEqual([])
      expect((yield* events).events.map((e) => [e.outcome, e.reason])).toEqual([["asked", null], ["refused", "DigestMismatch"]])
    })))

  it.scoped("ten minutes without a decision: expired, nothing installed, a notice says so", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { waiting } = yield* asked
      yield* TestClock.adjust(Duration.minutes(10))
      // The expiry runs on the node's clock; its write is done before the next read answers.
      const expired = yield* approval(waiting.approvalId)
      expect(expired.status).toBe("expired")
      expect(query(node.dataDir, "SELECT kind, subject_id, state FROM notices")).toEqual([
        { kind: "install-approval-expired", subject_id: waiting.approvalId, state: "unread" }
      ])
      expect(yield* decide(waiting.approvalId, "granted", waiting.operationDigest)).toMatchObject({
        status: 409,
        body: { code: "APPROVAL_EXPIRED" }
      })
      expect(installedRows(node.dataDir)).toEqual([])
      expect((yield* events).events.map((e) => e.outcome)).toEqual(["asked", "expired"])
    })))
})

describe("across a restart", () => {
  it.scoped("installed packages stay installed; a waiting approval still waits and expires on its own time", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const first = yield* withNode(Effect.gen(function*() {
        const theme = yield* listed(copyOf("harbour-theme"))
        yield* install(theme.packageId, theme.contentDigest!)
        const widget = yield* listed(copyOf("tide-widget"))
        const response = yield* install(widget.packageId, widget.contentDigest!)
        return { approvalId: response.body.approvalId as string }
      }), dataDir)

      yield* withNode(Effect.gen(function*() {
        expect(installedRows(dataDir).map((row) => row.package_id)).toEqual(["@clark-examples/harbour-theme"])
        expect((yield* approval(first.approvalId)).status).toBe("waiting")
        yield* TestClock.adjust(Duration.minutes(10))
        expect((yield* approval(first.approvalId)).status).toBe("expired")
      }), dataDir)
    }))
})
