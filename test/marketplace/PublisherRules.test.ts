/**
 * The publisher rules, pure: who may change or remove members (the last owner stays), what in the registry
 * makes a claim's evidence, what proves a token in the well-known file or a TXT record, and what a claim
 * reads out of a packument.
 */
import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { registryFacts } from "../../layers/marketplace/publishers/PublisherChecks.js"
import {
  type Actor,
  claimEvidence,
  dnsName,
  fileHoldsToken,
  type MemberRow,
  removalProblem,
  roleChangeProblem,
  txtHoldsToken,
  wellKnownUrl
} from "../../services/marketplace/Publishers.js"

const ann: Actor = { userId: "usr_ann", role: "user" }
const bob: Actor = { userId: "usr_bob", role: "user" }
const eve: Actor = { userId: "usr_eve", role: "user" }
const root: Actor = { userId: "usr_root", role: "admin" }

const oneOwner: ReadonlyArray<MemberRow> = [{ userId: "usr_ann", role: "owner" }, { userId: "usr_bob", role: "member" }]
const twoOwners: ReadonlyArray<MemberRow> = [{ userId: "usr_ann", role: "owner" }, { userId: "usr_bob", role: "owner" }]

describe("roleChangeProblem", () => {
  it.each([
    ["an owner adds a newcomer as member", oneOwner, ann, "usr_new", "member", undefined],
    ["an owner makes a member an owner", oneOwner, ann, "usr_bob", "owner", undefined],
    ["the only owner demotes itself", oneOwner, ann, "usr_ann", "member", "last-owner"],
    ["one of two owners demotes itself", twoOwners, ann, "usr_ann", "member", undefined],
    ["a member promotes itself", oneOwner, bob, "usr_bob", "owner", "not-permitted"],
    ["a member adds someone", oneOwner, bob, "usr_new", "member", "not-permitted"],
    ["an outsider adds itself", oneOwner, eve, "usr_eve", "owner", "not-permitted"],
    ["an admin who is no member adds someone", oneOwner, root, "usr_new", "owner", undefined],
    ["an admin demotes the only owner", oneOwner, root, "usr_ann", "member", "last-owner"]
  ] as const)("%s", (_, members, actor, target, role, expected) => {
    expect(roleChangeProblem(members, actor, target, role)).toBe(expected)
  })
})

describe("removalProblem", () => {
  it.each([
    ["an owner removes a member", oneOwner, ann, "usr_bob", undefined],
    ["a member leaves", oneOwner, bob, "usr_bob", undefined],
    ["a member removes the owner", oneOwner, bob, "usr_ann", "not-permitted"],
    ["the only owner leaves", oneOwner, ann, "usr_ann", "last-owner"],
    ["one of two owners removes the other", twoOwners, ann, "usr_bob", undefined],
    ["an owner removes someone who is no member", oneOwner, ann, "usr_eve", "not-member"],
    ["an outsider removes a member", oneOwner, eve, "usr_bob", "not-permitted"],
    ["an admin removes the only owner", oneOwner, root, "usr_ann", "last-owner"],
    ["an admin removes a member", oneOwner, root, "usr_bob", undefined]
  ] as const)("%s", (_, members, actor, target, expected) => {
    expect(removalProblem(members, actor, target)).toBe(expected)
  })
})

describe("claimEvidence", () => {
  const members = ["Ann@Acme.test", "bob@acme.test"]
  it.each([
    ["the manifest names the publisher", { manifestPublisher: "acme", maintainerEmails: [] }, Option.some("manifest")],
    ["the manifest wins over a maintainer", { manifestPublisher: "acme", maintainerEmails: ["bob@acme.test"] }, Option.some("manifest")],
    ["a maintainer is a member, case aside", { manifestPublisher: undefined, maintainerEmails: ["ann@acme.TEST"] }, Option.some("maintainer")],
    ["the manifest names another publisher, a maintainer is a member", { manifestPublisher: "globex", maintainerEmails: ["bob@acme.test"] }, Option.some("maintainer")],
    ["the manifest names another publisher", { manifestPublisher: "globex", maintainerEmails: ["eve@globex.test"] }, Option.none()],
    ["nothing names anyone", { manifestPublisher: undefined, maintainerEmails: [] }, Option.none()],
    ["a slug that only starts alike", { manifestPublisher: "acme-labs", maintainerEmails: [] }, Option.none()]
  ] as const)("%s", (_, facts, expected) => {
    expect(claimEvidence("acme", facts, members)).toEqual(expected)
  })
})

describe("what proves a token", () => {
  const token = "clark-publisher-abc"
  it.each([
    ["the token alone", "clark-publisher-abc", true],
    ["the token with a newline and spaces", "  clark-publisher-abc \r\n", true],
    ["the token among other lines", "other\nclark-publisher-abc\nmore", true],
    ["the token inside a longer line", "token=clark-publisher-abc", false],
    ["a prefix of the token", "clark-publisher-ab", false],
    ["nothing", "", false]
  ] as const)("in the file: %s", (_, body, expected) => {
    expect(fileHoldsToken(body, token)).toBe(expected)
  })

  it.each([
    ["one record, the token", [["clark-publisher-abc"]], true],
    ["the token split in chunks", [["clark-publisher-", "abc"]], true],
    ["another record beside it", [["v=spf1 -all"], ["clark-publisher-abc"]], true],
    ["the token in a longer record", [["x clark-publisher-abc"]], false],
    ["no records", [], false]
  ] as const)("in TXT records: %s", (_, records, expected) => {
    expect(txtHoldsToken(records, token)).toBe(expected)
  })

  it("looks at port 443 of the homepage's host, whatever its port and path", () => {
    const homepage = new URL("https://www.acme.test:8443/about/us?x=1")
    expect(wellKnownUrl(homepage).href).toBe("https://www.acme.test/.well-known/clark-publisher.txt")
    expect(dnsName(homepage)).toBe("_clark-publisher.www.acme.test")
  })
})

describe("registryFacts", () => {
  const packument = (value: unknown) => Buffer.from(JSON.stringify(value))
  it.each([
    [
      "the latest version's clark.publisher and the maintainers' e-mails",
      {
        name: "notes",
        "dist-tags": { latest: "2.0.0" },
        versions: { "1.0.0": { clark: { publisher: "old" } }, "2.0.0": { clark: { publisher: "acme" } } },
        maintainers: [{ name: "ann", email: "ann@acme.test" }, { name: "nomail" }, "junk"]
      },
      Option.some({ manifestPublisher: "acme", maintainerEmails: ["ann@acme.test"] })
    ],
    [
      "a clark.publisher that is not a string, no maintainers",
      { name: "notes", "dist-tags": { latest: "1.0.0" }, versions: { "1.0.0": { clark: { publisher: ["acme"] } } } },
      Option.some({ manifestPublisher: undefined, maintainerEmails: [] })
    ],
    [
      "no latest tag",
      { name: "notes", versions: {}, maintainers: [{ email: "ann@acme.test" }] },
      Option.some({ manifestPublisher: undefined, maintainerEmails: ["ann@acme.test"] })
    ],
    ["another package's packument", { name: "other", versions: {} }, Option.none()],
    ["no versions field", { name: "notes" }, Option.none()]
  ] as const)("%s", (_, value, expected) => {
    expect(registryFacts("notes", packument(value))).toEqual(expected)
  })

  it("refuses bytes that are not JSON", () => {
    expect(registryFacts("notes", Buffer.from("<html>"))).toEqual(Option.none())
  })
})
