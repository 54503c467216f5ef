/**
 * Publishers on SQLite or PostgreSQL. Every write reads the publisher and its members under the publisher
 * row's lock (PostgreSQL `FOR UPDATE`; SQLite runs one transaction at a time), decides with the rules of
 * services/marketplace/Publishers.ts, writes, and appends its audit entry in the same transaction: two
 * owners demoting each other at once cannot both see a second owner. The outside checks (the homepage's
 * file or DNS record, the registry's packument) run before the transaction, and the write that records
 * their result names what was checked, so a homepage changed meanwhile is not verified by an old proof.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import type { PackageClaim, Publisher, PublisherMember, PublisherRole } from "../../../schema/marketplace/Publishers.js"
import type { VerificationMethod } from "../../../schema/marketplace/Publishers.js"
import { AuditLog } from "../../../services/marketplace/AuditLog.js"
import {
  type Actor,
  claimEvidence,
  ClaimNotFound,
  ClaimRefused,
  ClaimTargetNotFound,
  dnsName,
  LastOwner,
  MemberNotFound,
  NoChallenge,
  NoHomepage,
  NotPermitted,
  PackageClaimed,
  PublisherChecks,
  PublisherExists,
  PublisherNotFound,
  Publishers,
  removalProblem,
  roleChangeProblem,
  standing,
  VerificationFailed,
  wellKnownUrl
} from "../../../services/marketplace/Publishers.js"
import { bool, flag, type Row, text, textOrNull } from "./Rows.js"

interface Loaded {
  readonly id: string
  readonly row: Row
  readonly members: ReadonlyArray<PublisherMember>
}

const toPublisher = ({ members, row }: Loaded, actor: Actor): Publisher => {
  const mine = standing(members, actor)
  return {
    id: text(row.id),
    slug: text(row.slug),
    name: text(row.name),
    homepage: textOrNull(row.homepage),
    verification: {
      verified: bool(row.verified),
      method: textOrNull(row.verificationMethod) as VerificationMethod | null,
      verifiedAt: textOrNull(row.verifiedAt)
    },
    role: mine === "admin" || mine === undefined ? null : mine,
    members,
    createdAt: text(row.createdAt),
    updatedAt: text(row.updatedAt ?? row.createdAt)
  }
}

const toClaim = (row: Row): PackageClaim => ({
  id: text(row.id),
  packageName: text(row.packageName),
  publisherSlug: text(row.slug),
  evidence: text(row.evidence) as PackageClaim["evidence"],
  claimedBy: text(row.claimedBy),
  createdAt: text(row.createdAt)
})

/** What the audit log keeps of a publisher: no token, no member addresses. */
const auditState = (publisher: Publisher) => ({
  name: publisher.name,
  homepage: publisher.homepage,
  verified: publisher.verification.verified,
  method: publisher.verification.method
})

/** A verification token: 32 random base64url characters behind a prefix that says what it is. */
const newToken = () => `clark-publisher-${randomBytes(24).toString("base64url")}`

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const audit = yield* AuditLog
  const checks = yield* PublisherChecks
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
  const lock = sql.literal(dialect === "pg" ? "FOR UPDATE" : "")
  const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

  /** The publisher and its members; `locked` inside a write's transaction. */
  const load = (slug: string, locked: boolean) =>
    Effect.gen(function*() {
      const [row] = yield* sql<Row>`SELECT id, slug, name, verified, homepage, verification_token, verification_method,
          verified_at, created_at, updated_at FROM publishers WHERE slug = ${slug} ${locked ? lock : sql.literal("")}`
      if (row === undefined) return yield* new PublisherNotFound({ slug })
      const members = yield* sql<Row>`SELECT m.user_id, m.role, m.created_at, u.name, u.email
        FROM publisher_members m JOIN users u ON u.id = m.user_id
        WHERE m.publisher_id = ${row.id} ORDER BY m.created_at, m.user_id`
      return {
        id: text(row.id),
        row,
        members: members.map((member): PublisherMember => ({
          userId: text(member.userId),
          name: text(member.name),
          email: text(member.email),
          role: text(member.role) as PublisherRole,
          addedAt: text(member.createdAt)
        }))
      } satisfies Loaded
    })

  /** Found only for its members and admins: to anyone else a publisher's members and token are not shown. */
  const visible = (slug: string, actor: Actor, locked: boolean) =>
    Effect.filterOrFail(load(slug, locked), (loaded) => standing(loaded.members, actor) !== undefined, () =>
      new PublisherNotFound({ slug }))

  /** The owner's part (admins too); a member gets NotPermitted. */
  const owned = (slug: string, actor: Actor, locked: boolean, doing: string) =>
    Effect.filterOrFail(visible(slug, actor, locked), (loaded) => standing(loaded.members, actor) !== "member", () =>
      new NotPermitted({ reason: `Only an owner of ${slug} may ${doing}` }))

  /** A database failure is a defect; the rules' failures roll back and stay typed. */
  const transaction = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    sql.withTransaction(effect).pipe(Effect.catchIf((e): e is SqlError.SqlError => e instanceof SqlError.SqlError, Effect.die))

  const reload = (slug: string, actor: Actor) => Effect.map(load(slug, false), (loaded) => toPublisher(loaded, actor))

  const record = (actor: Actor, action: string, target: string, before: unknown, after: unknown) =>
    audit.append({ actorId: actor.userId, action, targetKind: "publisher", target, before, after })

  const listMine: Publishers["Type"]["listMine"] = (actor) =>
    Effect.gen(function*() {
      const slugs = yield* sql<Row>`SELECT p.slug FROM publishers p JOIN publisher_members m ON m.publisher_id = p.id
        WHERE m.user_id = ${actor.userId} ORDER BY p.slug`
      return yield* Effect.forEach(slugs, (row) => reload(text(row.slug), actor))
    }).pipe(Effect.catchAll(Effect.die))

  const get: Publishers["Type"]["get"] = (actor, slug) =>
    Effect.map(visible(slug, actor, false), (loaded) => toPublisher(loaded, actor)).pipe(
      Effect.catchTag("SqlError", Effect.die)
    )

  const create: Publishers["Type"]["create"] = (actor, input) =>
    transaction(Effect.gen(function*() {
      const now = yield* nowIso
      const inserted = yield* sql<Row>`INSERT INTO publishers (slug, name, verified, created_at, homepage, updated_at)
        VALUES (${input.slug}, ${input.name}, ${flag(dialect, false)}, ${now}, ${input.homepage ?? null}, ${now})
        ON CONFLICT (slug) DO NOTHING RETURNING id`
      if (inserted.length === 0) return yield* new PublisherExists({ slug: input.slug })
      yield* sql`INSERT INTO publisher_members (publisher_id, user_id, role, created_at)
        VALUES (${inserted[0]!.id}, ${actor.userId}, 'owner', ${now})`
      // Inserted in this transaction: it is there.
      const publisher = yield* Effect.catchTag(reload(input.slug, actor), "PublisherNotFound", Effect.die)
      yield* record(actor, "publisher.create", input.slug, null, auditState(publisher))
      return publisher
    }))

  const update: Publishers["Type"]["update"] = (actor, slug, input) =>
    transaction(Effect.gen(function*() {
      const loaded = yield* owned(slug, actor, true, "change it")
      const before = toPublisher(loaded, actor)
      const homepage = input.homepage === undefined ? before.homepage : input.homepage
      const now = yield* nowIso
      // A proof was for the old homepage's domain: a new one starts unverified, with a new token.
      const moved = homepage !== before.homepage
      yield* sql`UPDATE publishers SET name = ${input.name ?? before.name}, homepage = ${homepage}, updated_at = ${now}
        ${moved
        ? sql`, verified = ${flag(dialect, false)}, verification_token = NULL, verification_method = NULL, verified_at = NULL`
        : sql``}
        WHERE id = ${loaded.id}`
      const after = yield* reload(slug, actor)
      yield* record(actor, "publisher.update", slug, auditState(before), auditState(after))
      return after
    }))

  const addMember: Publishers["Type"]["addMember"] = (actor, slug, { email, role }) =>
    transaction(Effect.gen(function*() {
      const loaded = yield* visible(slug, actor, true)
      const address = email.trim().toLowerCase()
      const [user] = yield* sql<Row>`SELECT id FROM users WHERE email = ${address}`
      if (standing(loaded.members, actor) === "member") {
        return yield* new NotPermitted({ reason: `Only an owner of ${slug} may change its members` })
      }
      if (user === undefined) return yield* new MemberNotFound({ who: address })
      const userId = text(user.id)
      const problem = roleChangeProblem(loaded.members, actor, userId, role)
      if (problem === "not-permitted") return yield* new NotPermitted({ reason: `Only an owner of ${slug} may change its members` })
      if (problem === "last-owner") return yield* new LastOwner({ slug })
      const current = loaded.members.find((member) => member.userId === userId)
      yield* sql`INSERT INTO publisher_members (publisher_id, user_id, role, created_at)
        VALUES (${loaded.id}, ${userId}, ${role}, ${yield* nowIso})
        ON CONFLICT (publisher_id, user_id) DO UPDATE SET role = excluded.role`
      yield* record(
        actor,
        current === undefined ? "publisher.member.add" : "publisher.member.role",
        slug,
        current === undefined ? null : { userId, role: current.role },
        { userId, role }
      )
      return yield* reload(slug, actor)
    }))

  const removeMember: Publishers["Type"]["removeMember"] = (actor, slug, userId) =>
    transaction(Effect.gen(function*() {
      const loaded = yield* visible(slug, actor, true)
      const problem = removalProblem(loaded.members, actor, userId)
      if (problem === "not-permitted") {
        return yield* new NotPermitted({ reason: `Only an owner of ${slug} may remove another member` })
      }
      if (problem === "not-member") return yield* new MemberNotFound({ who: userId })
      if (problem === "last-owner") return yield* new LastOwner({ slug })
      const current = loaded.members.find((member) => member.userId === userId)!
      yield* sql`DELETE FROM publisher_members WHERE publisher_id = ${loaded.id} AND user_id = ${userId}`
      yield* record(actor, "publisher.member.remove", slug, { userId, role: current.role }, null)
      return yield* reload(slug, actor)
    }))

  const challenge: Publishers["Type"]["challenge"] = (actor, slug) =>
    transaction(Effect.gen(function*() {
      const loaded = yield* owned(slug, actor, true, "verify it")
      const homepage = textOrNull(loaded.row.homepage)
      if (homepage === null) return yield* new NoHomepage({ slug })
      let token = textOrNull(loaded.row.verificationToken)
      if (token === null) {
        token = newToken()
        yield* sql`UPDATE publishers SET verification_token = ${token} WHERE id = ${loaded.id}`
        // The token itself is not recorded: the log says a challenge was issued, the publisher row holds it.
        yield* record(actor, "publisher.challenge", slug, null, { homepage })
      }
      const url = new URL(homepage)
      return { token, wellKnownUrl: wellKnownUrl(url).href, dnsName: dnsName(url) }
    }))

  const verify: Publishers["Type"]["verify"] = (actor, slug, method) =>
    Effect.gen(function*() {
      const loaded = yield* owned(slug, actor, false, "verify it")
      const homepage = textOrNull(loaded.row.homepage)
      if (homepage === null) return yield* new NoHomepage({ slug })
      const token = textOrNull(loaded.row.verificationToken)
      if (token === null) return yield* new NoChallenge({ slug })
      yield* method === "dns" ? checks.dns(new URL(homepage), token) : checks.wellKnown(new URL(homepage), token)
      return yield* transaction(Effect.gen(function*() {
        const before = toPublisher(yield* load(slug, true), actor)
        const now = yield* nowIso
        const marked = yield* sql<Row>`UPDATE publishers SET verified = ${flag(dialect, true)},
            verification_method = ${method}, verified_at = ${now}, updated_at = ${now}
          WHERE id = ${loaded.id} AND homepage = ${homepage} AND verification_token = ${token} RETURNING id`
        if (marked.length === 0) {
          return yield* new VerificationFailed({ method, problem: "the homepage changed while it was checked; ask again" })
        }
        const after = yield* reload(slug, actor)
        yield* record(actor, "publisher.verify", slug, auditState(before), auditState(after))
        return after
      }))
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  const claimRows = (where: ReturnType<typeof sql.and>) =>
    sql<Row>`SELECT c.id, c.package_name, c.evidence, c.claimed_by, c.created_at, p.slug
      FROM publisher_claims c JOIN publishers p ON p.id = c.publisher_id WHERE ${where} ORDER BY c.package_name`

  const claims: Publishers["Type"]["claims"] = (actor, slug) =>
    Effect.gen(function*() {
      const loaded = yield* visible(slug, actor, false)
      return (yield* claimRows(sql.and([sql`c.publisher_id = ${loaded.id}`]))).map(toClaim)
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  /** The package's catalogue row and who holds it now (a claim, or an import's publisher). */
  const holder = (packageName: string, locked: boolean) =>
    Effect.gen(function*() {
      const [pkg] = yield* sql<Row>`SELECT p.id, p.publisher_id, pub.slug FROM packages p
        LEFT JOIN publishers pub ON pub.id = p.publisher_id WHERE p.name = ${packageName}
        ${locked && dialect === "pg" ? sql.literal("FOR UPDATE OF p") : sql.literal("")}`
      if (pkg === undefined) return yield* new ClaimTargetNotFound({ packageName, where: "catalogue" })
      const [claimed] = yield* sql<Row>`SELECT publisher_id FROM publisher_claims WHERE package_name = ${packageName}`
      return { pkg, heldBy: textOrNull(pkg.slug), claimedHere: claimed !== undefined && text(claimed.publisherId) === text(pkg.publisherId) }
    })

  const claim: Publishers["Type"]["claim"] = (actor, slug, packageName) =>
    Effect.gen(function*() {
      const loaded = yield* visible(slug, actor, false)
      const first = yield* holder(packageName, false)
      if (first.heldBy === slug && first.claimedHere) return yield* new PackageClaimed({ packageName, publisherSlug: slug })
      const facts = yield* checks.registry(packageName)
      const evidence = yield* Option.match(claimEvidence(slug, facts, loaded.members.map((member) => member.email)), {
        onNone: () =>
          Effect.fail(new ClaimRefused({
            packageName,
            reason: `neither the manifest's clark.publisher names ${slug} nor is a registry maintainer a member`
          })),
        onSome: Effect.succeed
      })
      return yield* transaction(Effect.gen(function*() {
        const { heldBy, pkg } = yield* holder(packageName, true)
        // Another publisher's package moves only when the package's own manifest names this one.
        if (heldBy !== null && heldBy !== slug && evidence !== "manifest") {
          return yield* new PackageClaimed({ packageName, publisherSlug: heldBy })
        }
        const now = yield* nowIso
        yield* sql`DELETE FROM publisher_claims WHERE package_name = ${packageName}`
        yield* sql`INSERT INTO publisher_claims (publisher_id, package_name, evidence, claimed_by, created_at)
          VALUES (${loaded.id}, ${packageName}, ${evidence}, ${actor.userId}, ${now})`
        yield* sql`UPDATE packages SET publisher_id = ${loaded.id}, updated_at = ${now} WHERE id = ${pkg.id}`
        yield* audit.append({
          actorId: actor.userId,
          action: "publisher.claim",
          targetKind: "package",
          target: packageName,
          before: { publisher: heldBy },
          after: { publisher: slug, evidence }
        })
        const [row] = yield* claimRows(sql.and([sql`c.package_name = ${packageName}`]))
        return toClaim(row!)
      }))
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  const release: Publishers["Type"]["release"] = (actor, slug, packageName) =>
    transaction(Effect.gen(function*() {
      const loaded = yield* owned(slug, actor, true, "give a package up")
      const [row] = yield* claimRows(sql.and([sql`c.package_name = ${packageName}`, sql`c.publisher_id = ${loaded.id}`]))
      if (row === undefined) return yield* new ClaimNotFound({ packageName })
      const now = yield* nowIso
      yield* sql`DELETE FROM publisher_claims WHERE id = ${row.id}`
      yield* sql`UPDATE packages SET publisher_id = NULL, updated_at = ${now}
        WHERE name = ${packageName} AND publisher_id = ${loaded.id}`
      yield* audit.append({
        actorId: actor.userId,
        action: "publisher.release",
        targetKind: "package",
        target: packageName,
        before: { publisher: slug },
        after: { publisher: null }
      })
      return toClaim(row)
    }))

  return Publishers.of({ listMine, get, create, update, addMember, removeMember, challenge, verify, claims, claim, release })
})

export const layer = Layer.effect(Publishers, make)
