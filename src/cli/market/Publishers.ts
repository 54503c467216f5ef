/**
 * `clark market publisher …`: publishers (scopes publishers:read, publishers:write): create, show, update,
 * members, the verification of the homepage's domain and package claims. `verify SLUG` alone prints what to
 * publish (the token, the file's URL, the DNS name); `verify SLUG --method …` asks the marketplace to check.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Option } from "effect"
import type { PackageClaim, Publisher, VerificationChallenge } from "../../../schema/marketplace/Publishers.js"
import { table } from "../Output.js"
import { connectionOptions } from "./Settings.js"
import { given, optionalText, packageName, request } from "./Shared.js"

export const renderPublisher = (publisher: Publisher) =>
  [
    table([
      ["slug", publisher.slug],
      ["name", publisher.name],
      ["homepage", publisher.homepage ?? "-"],
      [
        "verified",
        publisher.verification.verified
          ? `yes (${publisher.verification.method ?? "import"}${publisher.verification.verifiedAt === null ? "" : ` at ${publisher.verification.verifiedAt}`})`
          : "no"
      ],
      ["your role", publisher.role ?? "-"],
      ["updated", publisher.updatedAt]
    ]),
    "",
    table([["MEMBER", "EMAIL", "ROLE", "ADDED"], ...publisher.members.map((m) => [m.userId, m.email, m.role, m.addedAt])])
  ].join("\n")

const renderList = (publishers: ReadonlyArray<Publisher>) =>
  publishers.length === 0 ? "no publishers" : table([
    ["SLUG", "NAME", "VERIFIED", "ROLE", "MEMBERS"],
    ...publishers.map((p) => [p.slug, p.name, p.verification.verified ? "yes" : "no", p.role ?? "-", String(p.members.length)])
  ])

const renderChallenge = (challenge: VerificationChallenge) =>
  [
    `token     ${challenge.token}`,
    `file      ${challenge.wellKnownUrl} holding the token on a line of its own (--method well-known)`,
    `dns       a TXT record at ${challenge.dnsName} whose value is the token (--method dns)`
  ].join("\n")

const renderClaim = (claim: PackageClaim) => `${claim.packageName}  ${claim.publisherSlug}  ${claim.evidence}  ${claim.createdAt}`

const slug = Args.text({ name: "SLUG" }).pipe(Args.withDescription("publisher slug: lowercase letters and digits joined by hyphens"))

const list = Command.make("list", connectionOptions, (options) =>
  request(options, (api) => api.publishers.list({ withResponse: true }), (result) => renderList(result.items))).pipe(
    Command.withDescription("List the publishers you are a member of (publishers:read)")
  )

const show = Command.make("show", { ...connectionOptions, slug }, (options) =>
  request(options, (api) => api.publishers.get({ path: { slug: options.slug }, withResponse: true }), renderPublisher)).pipe(Command.withDescription("Show a publisher with its members and verification (publishers:read)"))

const create = Command.make("create", {
  ...connectionOptions,
  slug,
  name: Options.text("name").pipe(Options.withDescription("display name, 1-120 characters")),
  homepage: optionalText("homepage", "https URL; its domain is what a verification proves")
}, (options) =>
  request(
    options,
    (api) =>
      api.publishers.create({
        payload: { slug: options.slug, name: options.name, ...given({ homepage: options.homepage }) },
        withResponse: true
      }),
    renderPublisher
  )).pipe(Command.withDescription("Create a publisher; you become its owner (publishers:write)"))

const update = Command.make("update", {
  ...connectionOptions,
  slug,
  name: optionalText("name", "new display name, 1-120 characters"),
  homepage: optionalText("homepage", "new https URL, or none to remove it; a new one clears the verification")
}, (options) =>
  request(
    options,
    (api) =>
      api.publishers.update({
        path: { slug: options.slug },
        payload: {
          ...given({ name: options.name }),
          ...Option.match(options.homepage, { onNone: () => ({}), onSome: (url) => ({ homepage: url === "none" ? null : url }) })
        },
        withResponse: true
      }),
    renderPublisher
  )).pipe(Command.withDescription("Rename a publisher or change its homepage (owners)"))

const add = Command.make("add", {
  ...connectionOptions,
  slug,
  email: Args.text({ name: "EMAIL" }).pipe(Args.withDescription("the account's e-mail address")),
  role: Options.choice("role", ["member", "owner"]).pipe(
    Options.withDescription("member or owner (default member); a member's role is changed"),
    Options.withDefault("member" as const)
  )
}, (options) =>
  request(
    options,
    (api) =>
      api.publishers.addMember({ path: { slug: options.slug }, payload: { email: options.email, role: options.role }, withResponse: true }),
    renderPublisher
  )).pipe(Command.withDescription("Add a member or change a member's role (owners)"))

const remove = Command.make("remove", {
  ...connectionOptions,
  slug,
  userId: Args.text({ name: "USER_ID" }).pipe(Args.withDescription("the member's id (usr_…, from `publisher show`)"))
}, (options) =>
  request(
    options,
    (api) => api.publishers.removeMember({ path: { slug: options.slug, userId: options.userId }, withResponse: true }),
    renderPublisher
  )).pipe(Command.withDescription("Remove a member (owners) or leave; the last owner stays"))

const members = Command.make("members").pipe(
  Command.withDescription("A publisher's members (owners manage them)"),
  Command.withSubcommands([add, remove])
)

const verify = Command.make("verify", {
  ...connectionOptions,
  slug,
  method: Options.choice("method", ["well-known", "dns"]).pipe(
    Options.withDescription("check this proof now; without it, print what to publish"),
    Options.optional
  )
}, (options) =>
  Option.match(options.method, {
    onNone: () =>
      request(options, (api) => api.publishers.challenge({ path: { slug: options.slug }, withResponse: true }), renderChallenge),
    onSome: (method) =>
      request(
        options,
        (api) => api.publishers.verify({ path: { slug: options.slug }, payload: { method }, withResponse: true }),
        renderPublisher
      )
  })).pipe(Command.withDescription("Print the verification token, or check it with --method (owners)"))

const claim = Command.make("claim", { ...connectionOptions, slug, name: packageName }, (options) =>
  request(
    options,
    (api) => api.publishers.claim({ path: { slug: options.slug }, payload: { packageName: options.name }, withResponse: true }),
    (claimed) => `claimed ${claimed.packageName} for ${claimed.publisherSlug} (${claimed.evidence})`
  )).pipe(Command.withDescription("Claim a catalogue package the registry shows is the publisher's"))

const claims = Command.make("claims", { ...connectionOptions, slug }, (options) =>
  request(
    options,
    (api) => api.publishers.claims({ path: { slug: options.slug }, withResponse: true }),
    (result) => result.items.length === 0 ? "no claims" : result.items.map(renderClaim).join("\n")
  )).pipe(Command.withDescription("List the packages a publisher holds by claim (publishers:read)"))

const release = Command.make("release", { ...connectionOptions, slug, name: packageName }, (options) =>
  request(
    options,
    (api) => api.publishers.release({ path: { slug: options.slug, name: options.name }, withResponse: true }),
    (released) => `released ${released.packageName}`
  )).pipe(Command.withDescription("Give a claimed package up (owners)"))

export const publisher = Command.make("publisher").pipe(
  Command.withDescription("Publishers: members, verification, claims (publishers:*)"),
  Command.withSubcommands([list, show, create, update, members, verify, claim, claims, release])
)
