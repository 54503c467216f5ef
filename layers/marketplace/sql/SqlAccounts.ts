/** AccountStore on SQLite or PostgreSQL. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import type { CurationStatus } from "../../../schema/marketplace/Package.js"
import { AccountStore, SoleOwner, UnknownPublisher } from "../../../services/marketplace/Accounts.js"
import { UnknownUser } from "../../../services/marketplace/Credentials.js"
import { bool, int, type Row, text, textOrNull } from "./Rows.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const ownedListings: AccountStore["Type"]["ownedListings"] = (userId) =>
    sql<Row>`SELECT p.id, p.name, p.display_name, p.latest_version, p.curation_status,
        pub.id AS publisher_id, pub.slug AS publisher_slug, pub.name AS publisher_name, pub.verified
      FROM publisher_members m
        JOIN publishers pub ON pub.id = m.publisher_id
        JOIN packages p ON p.publisher_id = pub.id
      WHERE m.user_id = ${userId}
      ORDER BY p.name`.pipe(
      Effect.map((rows) =>
        rows.map((row) => ({
          id: text(row.id),
          name: text(row.name),
          displayName: text(row.displayName),
          latestVersion: textOrNull(row.latestVersion),
          curationStatus: text(row.curationStatus) as CurationStatus,
          verifiedPublisher: bool(row.verified),
          publisher: { id: text(row.publisherId), slug: text(row.publisherSlug), name: text(row.publisherName) }
        }))
      ),
      Effect.orDie
    )

  /**
   * The user's row, locked until the transaction ends. Without the lock two
   * simultaneous deletions on PostgreSQL both found the user, both counted what
   * it owned and both answered 200 with those counts; with it the second waits,
   * then finds no user and answers as a credential that is gone. SQLite runs one
   * transaction at a time.
   */
  const lockedUser = sql.onDialectOrElse({
    pg: () => (userId: string) => sql<Row>`SELECT id FROM users WHERE id = ${userId} FOR UPDATE`,
    orElse: () => (userId: string) => sql<Row>`SELECT id FROM users WHERE id = ${userId}`
  })

  const deleteAccount: AccountStore["Type"]["deleteAccount"] = (userId) =>
    sql.withTransaction(Effect.gen(function*() {
      const [user] = yield* lockedUser(userId)
      if (user === undefined) return Option.none()
      const memberships = yield* sql<Row>`SELECT m.publisher_id, m.role, pub.slug,
          (SELECT COUNT(*) FROM publisher_members o
            WHERE o.publisher_id = m.publisher_id AND o.user_id <> ${userId}) AS others,
          (SELECT COUNT(*) FROM publisher_members o
            WHERE o.publisher_id = m.publisher_id AND o.user_id <> ${userId} AND o.role = 'owner') AS other_owners
        FROM publisher_members m JOIN publishers pub ON pub.id = m.publisher_id
        WHERE m.user_id = ${userId} ORDER BY pub.slug`
      const stranded = memberships.filter((m) =>
        text(m.role) === "owner" && int(m.others) > 0 && int(m.otherOwners) === 0
      )
      if (stranded.length > 0) return yield* new SoleOwner({ publishers: stranded.map((m) => text(m.slug)) })
      const alone = memberships.filter((m) => int(m.others) === 0).map((m) => m.publisherId)
      const [counts] = yield* sql<Row>`SELECT
        (SELECT COUNT(*) FROM api_tokens WHERE user_id = ${userId}) AS api_tokens,
        (SELECT COUNT(*) FROM device_links WHERE user_id = ${userId}) AS device_links,
        (SELECT COUNT(*) FROM oauth_grants WHERE user_id = ${userId}) AS oauth_grants,
        (SELECT COUNT(*) FROM media WHERE owner_id = ${userId}) AS media`
      if (alone.length > 0) yield* sql`DELETE FROM publishers WHERE ${sql.in("id", alone)}`
      // Everything else the account owns goes with it (ON DELETE CASCADE).
      yield* sql`DELETE FROM users WHERE id = ${userId}`
      return Option.some({
        apiTokens: int(counts?.apiTokens),
        deviceLinks: int(counts?.deviceLinks),
        oauthGrants: int(counts?.oauthGrants),
        publishers: alone.length,
        media: int(counts?.media)
      })
    })).pipe(Effect.catchTag("SqlError", Effect.die))

  const setPublisherMember: AccountStore["Type"]["setPublisherMember"] = ({ email, publisherSlug, role }) =>
    Effect.gen(function*() {
      const normalized = email.trim().toLowerCase()
      const [user] = yield* sql<Row>`SELECT id FROM users WHERE email = ${normalized}`
      if (user === undefined) return yield* new UnknownUser({ email: normalized })
      const [publisher] = yield* sql<Row>`SELECT id FROM publishers WHERE slug = ${publisherSlug}`
      if (publisher === undefined) return yield* new UnknownPublisher({ slug: publisherSlug })
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* sql`INSERT INTO publisher_members (publisher_id, user_id, role, created_at)
        VALUES (${publisher.id}, ${user.id}, ${role}, ${now})
        ON CONFLICT (publisher_id, user_id) DO UPDATE SET role = excluded.role`
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  return AccountStore.of({ ownedListings, deleteAccount, setPublisherMember })
})

export const layer = Layer.effect(AccountStore, make)
