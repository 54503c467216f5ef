/**
 * The publisher checks against a real local HTTPS server standing in for the homepage (the names resolve
 * through a scripted resolver to a public address, dialled at 127.0.0.1): the file that proves the token,
 * and every hostile answer refused with what was found, asking nothing it should not. The DNS check through
 * the scripted resolver's TXT records.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, TestClock } from "effect"
import { checkDns } from "../../../layers/marketplace/publishers/PublisherChecks.js"
import { checkWellKnown, maxBodyBytes } from "../../../layers/marketplace/publishers/WellKnown.js"
import type { VerificationFailed } from "../../../services/marketplace/Publishers.js"
import { type Homepage, startHomepage } from "../fixtures/Homepage.js"

const token = "clark-publisher-TOKEN123"
const file = "/.well-known/clark-publisher.txt"

let homepage: Homepage
beforeAll(async () => {
  homepage = await startHomepage()
})
afterAll(() => homepage.close())

const check = (url: string) =>
  checkWellKnown({ resolver: homepage.resolver, ca: homepage.cert, dialVia: homepage.dialLocally, dialPort: homepage.port })(
    new URL(url),
    token
  )

const at = (host: string, path = "/") => `https://${host}${path}`

/** The check's failure; fails the test when it succeeds. */
const problemOf = (effect: Effect.Effect<void, VerificationFailed>) =>
  Effect.map(Effect.flip(effect), (failure) => {
    expect(failure._tag).toBe("VerificationFailed")
    return failure.problem
  })

const requestsSince = (count: number) => homepage.requests.slice(count)

describe("the well-known file", () => {
  it.effect("refuses a redirect to another port of the same host without asking it", () =>
    Effect.gen(function*() {
      homepage.answer("globex.test", file, { kind: "redirect", location: `https://globex.test:8443${file}` })
      const before = homepage.requests.length
      expect(yield* problemOf(check(at("globex.test")))).toContain("redirected to another host or port (globex.test:8443)")
      expect(requestsSince(before)).toEqual([`globex.test ${file}`])
    }))

  it.effect("proves the token when a line of it is the token, asked on port 443 of the homepage's host", () =>
    Effect.gen(function*() {
      homepage.answer("acme.test", file, { kind: "file", body: `# clark\n${token}\n` })
      const before = homepage.requests.length
      // The homepage's own port is not where the proof is read.
      yield* check(`https://acme.test:8080/products/index.html`)
      expect(requestsSince(before)).toEqual([`acme.test ${file}`])
    }))

  it.effect("follows a redirect on the same host", () =>
    Effect.gen(function*() {
      homepage.answer("www.acme.test", file, { kind: "redirect", location: "/proofs/clark.txt" })
      homepage.answer("www.acme.test", "/proofs/clark.txt", { kind: "file", body: token })
      const before = homepage.requests.length
      yield* check(at("www.acme.test"))
      expect(requestsSince(before)).toEqual([`www.acme.test ${file}`, "www.acme.test /proofs/clark.txt"])
    }))

  it.effect("refuses a redirect to another host without asking it", () =>
    Effect.gen(function*() {
      homepage.answer("globex.test", file, { kind: "redirect", location: at("other.test", file) })
      homepage.answer("other.test", file, { kind: "file", body: token })
      const before = homepage.requests.length
      const problem = yield* problemOf(check(at("globex.test")))
      expect(problem).toContain("redirected to another host or port (other.test)")
      expect(requestsSince(before)).toEqual([`globex.test ${file}`])
    }))

  it.effect("refuses a redirect down to plain http on the same host without asking it", () =>
    Effect.gen(function*() {
      homepage.answer("other.test", file, { kind: "redirect", location: `http://other.test${file}` })
      const before = homepage.requests.length
      expect(yield* problemOf(check(at("other.test")))).toBe(`http://other.test${file} is not https`)
      expect(requestsSince(before)).toEqual([`other.test ${file}`])
    }))

  it.effect("refuses a file without the token, and a missing file, saying what it found", () =>
    Effect.gen(function*() {
      homepage.answer("other.test", file, { kind: "file", body: `token=${token}` })
      expect(yield* problemOf(check(at("other.test")))).toContain("does not hold the token on a line of its own")
      homepage.answer("other.test", file, { kind: "file", body: token, status: 404 })
      expect(yield* problemOf(check(at("other.test")))).toContain("answered 404")
    }))

  it.effect(`stops reading a body beyond ${maxBodyBytes} bytes, the token past the cap not counting`, () =>
    Effect.gen(function*() {
      homepage.answer("other.test", file, { kind: "file", body: Buffer.concat([Buffer.alloc(1024 * 1024, "x"), Buffer.from(`\n${token}\n`)]) })
      expect(yield* problemOf(check(at("other.test")))).toContain(`holds more than ${maxBodyBytes} bytes`)
    }))

  it.effect("refuses a name resolving to a private address before connecting", () =>
    Effect.gen(function*() {
      homepage.privateNames.add("private.test")
      homepage.answer("private.test", file, { kind: "file", body: token })
      const before = homepage.requests.length
      expect(yield* problemOf(check(at("private.test")))).toContain("resolves to a loopback, private, link-local or reserved address")
      expect(requestsSince(before)).toEqual([])
    }))

  it.effect("refuses a homepage written as a loopback or private address without connecting", () =>
    Effect.gen(function*() {
      const before = homepage.requests.length
      expect(yield* problemOf(check(`https://127.0.0.1:${homepage.port}/`))).toContain("127.0.0.1 is a loopback, private")
      expect(yield* problemOf(check("https://[::1]/"))).toContain("is a loopback, private")
      expect(requestsSince(before)).toEqual([])
    }))

  it.effect("refuses a redirect loop after 3 redirects", () =>
    Effect.gen(function*() {
      homepage.answer("acme.test", "/loop", { kind: "redirect", location: "/loop" })
      homepage.answer("www.acme.test", file, { kind: "redirect", location: "/loop" })
      homepage.answer("www.acme.test", "/loop", { kind: "redirect", location: "/loop" })
      const before = homepage.requests.length
      expect(yield* problemOf(check(at("www.acme.test")))).toContain("more than 3 redirects")
      expect(requestsSince(before)).toHaveLength(4)
    }))

  it.effect("gives up on a server that never answers after 10 seconds (on the test clock)", () =>
    Effect.gen(function*() {
      homepage.answer("globex.test", file, { kind: "silent" })
      const before = homepage.requests.length
      const fiber = yield* Effect.fork(check(at("globex.test")))
      // Real time until the request has arrived; then the deadline passes on the test clock.
      while (homepage.requests.length === before) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      yield* TestClock.adjust("10 seconds")
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* problemOf(Fiber.join(fiber))).toContain("did not answer within 10s")
    }))
})

describe("the DNS TXT record", () => {
  const dns = (host: string) => checkDns(homepage.resolver)(new URL(`https://${host}/`), token)

  it.effect("proves the token when a record at _clark-publisher.{host} is the token", () =>
    Effect.gen(function*() {
      homepage.txt.set("_clark-publisher.acme.test", [["v=spf1 -all"], ["clark-publisher-", "TOKEN123"]])
      yield* dns("acme.test")
    }))

  it.effect("gives up on a resolver that never answers after 10 seconds (on the test clock)", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(
        checkDns({ ...homepage.resolver, txt: () => Effect.never })(new URL("https://acme.test/"), token)
      )
      yield* TestClock.adjust("9 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      expect(yield* problemOf(Fiber.join(fiber))).toBe("the TXT lookup of _clark-publisher.acme.test did not answer in time")
    }))

  it.effect("refuses another value, and a name without records", () =>
    Effect.gen(function*() {
      homepage.txt.set("_clark-publisher.other.test", [["clark-publisher-SOMEONE-ELSE"]])
      expect(yield* problemOf(dns("other.test"))).toBe("no TXT record at _clark-publisher.other.test is the token")
      expect(yield* problemOf(dns("globex.test"))).toBe("no TXT record at _clark-publisher.globex.test")
    }))
})
