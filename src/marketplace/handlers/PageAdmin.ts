/**
 * The page-builder admin routes: reads need pages:read, drafts pages:write,
 * publishing and unpublishing pages:publish. Every answer about one page
 * carries its `ETag`; every write to an existing page needs `If-Match` with it
 * (428 without, 412 when the page has moved on, with the current tag in
 * `details.currentETag`).
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import {
  Conflict,
  NotFound,
  PreconditionFailed,
  PreconditionRequired,
  ValidationFailed
} from "../../../schema/marketplace/Errors.js"
import { PageState, SavedDraft } from "../../../schema/marketplace/PageAdmin.js"
import { documentIssues, PageEditor, type StaleVersion } from "../../../services/marketplace/PageEditor.js"
import { etag, parseIfMatch } from "../../../services/marketplace/Preconditions.js"
import { requireScope } from "./Scopes.js"

/**
 * The body as the schema encodes it, with the page's entity tag. A value that does not encode is a defect
 * here, never a ParseError: one escaping a handler would be answered as the client's 400.
 */
const respond = <A, I>(schema: Schema.Schema<A, I>, value: A, version: number, status: number) =>
  Effect.map(Effect.orDie(Schema.encode(schema)(value)), (body) =>
    HttpServerResponse.unsafeJson(body, { status, headers: { etag: etag(version) } }))

const pageNotFound = ({ slug }: { readonly slug: string }) => new NotFound({ message: `No page ${slug}` })

const stale = ({ current }: StaleVersion) =>
  new PreconditionFailed({
    message: `The page has changed: its ETag is now ${etag(current)}; read it again before writing`,
    details: { currentETag: etag(current) }
  })

/** The versions `If-Match` names; 428 when there is none. */
const expectedVersions = (header: string | undefined) => {
  const precondition = parseIfMatch(header)
  return precondition._tag === "Missing"
    ? Effect.fail(
      new PreconditionRequired({ message: "Writes to a page need If-Match with the page's ETag (GET the page for it)" })
    )
    : Effect.succeed(precondition.versions)
}

export const PageAdminLive = HttpApiBuilder.group(MarketplaceApi, "pageAdmin", (handlers) =>
  Effect.gen(function*() {
    const editor = yield* PageEditor

    const found = (slug: string) => <A>(option: Option.Option<A>): Effect.Effect<A, NotFound> =>
      Option.match(option, { onNone: () => Effect.fail(pageNotFound({ slug })), onSome: Effect.succeed })

    return handlers
      .handle("list", () => Effect.zipRight(requireScope("pages:read"), Effect.map(editor.list, (items) => ({ items }))))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const { userId } = yield* requireScope("pages:write")
          const page = yield* editor.create({ ...payload, actorId: userId }).pipe(
            Effect.mapError(({ slug }) => new Conflict({ message: `A page ${slug} exists already` }))
          )
          return yield* respond(PageState, page, page.version, 201)
        }))
      .handle("get", ({ path }) =>
        Effect.gen(function*() {
          yield* requireScope("pages:read")
          const page = yield* Effect.flatMap(editor.get(path.slug), found(path.slug))
          return yield* respond(PageState, page, page.version, 200)
        }))
      .handle("revisions", ({ path }) =>
        Effect.gen(function*() {
          yield* requireScope("pages:read")
          return { items: yield* Effect.flatMap(editor.revisions(path.slug), found(path.slug)) }
        }))
      .handle("revision", ({ path }) =>
        Effect.gen(function*() {
          yield* requireScope("pages:read")
          return yield* Effect.flatMap(
            editor.revision(path.slug, path.number),
            Option.match({
              onNone: () => Effect.fail(new NotFound({ message: `No revision ${path.number} of the page ${path.slug}` })),
              onSome: Effect.succeed
            })
          )
        }))
      .handle("saveDraft", ({ headers, path, payload }) =>
        Effect.gen(function*() {
          const { userId } = yield* requireScope("pages:write")
          const expected = yield* expectedVersions(headers["if-match"])
          const issues = documentIssues(payload.document)
          if (issues.length > 0) {
            return yield* new ValidationFailed({
              message: `Invalid document: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`,
              details: { issues }
            })
          }
          const saved = yield* editor.saveDraft({ slug: path.slug, expected, actorId: userId, document: payload.document }).pipe(
            Effect.catchTags({ PageNotFound: (e) => Effect.fail(pageNotFound(e)), StaleVersion: (e) => Effect.fail(stale(e)) })
          )
          return yield* respond(SavedDraft, saved, saved.page.version, 201)
        }))
      .handle("publish", ({ headers, path, payload }) =>
        Effect.gen(function*() {
          const { userId } = yield* requireScope("pages:publish")
          const expected = yield* expectedVersions(headers["if-match"])
          const page = yield* editor.publish({ slug: path.slug, expected, actorId: userId, ...payload }).pipe(
            Effect.catchTags({
              PageNotFound: (e) => Effect.fail(pageNotFound(e)),
              StaleVersion: (e) => Effect.fail(stale(e)),
              RevisionNotFound: (e) => Effect.fail(new NotFound({ message: `No revision ${e.number} of the page ${e.slug}` }))
            })
          )
          return yield* respond(PageState, page, page.version, 200)
        }))
      .handle("unpublish", ({ headers, path }) =>
        Effect.gen(function*() {
          const { userId } = yield* requireScope("pages:publish")
          const expected = yield* expectedVersions(headers["if-match"])
          const page = yield* editor.unpublish({ slug: path.slug, expected, actorId: userId }).pipe(
            Effect.catchTags({
              PageNotFound: (e) => Effect.fail(pageNotFound(e)),
              StaleVersion: (e) => Effect.fail(stale(e)),
              NotPublished: (e) => Effect.fail(new Conflict({ message: `The page ${e.slug} is not published` }))
            })
          )
          return yield* respond(PageState, page, page.version, 200)
        }))
  }))
