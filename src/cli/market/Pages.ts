/**
 * `clark market pages …`: the page builder's commands (scopes pages:read,
 * pages:write, pages:publish). `clark market page SLUG` stays the public read
 * of a published page; a slug may be any word (`draft`, `list`), so the
 * editor's commands live under their own name. Every write names the version
 * it is based on (`--if-match`, from `pages show`), so a change made meanwhile
 * by someone else is refused (412) instead of overwritten.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { FileSystem } from "@effect/platform"
import { Effect, Option } from "effect"
import { PageKind } from "../../../schema/marketplace/Page.js"
import type { PageState, Revision, RevisionSummary, SavedDraft } from "../../../schema/marketplace/PageAdmin.js"
import { table } from "../Output.js"
import { connectionOptions, MarketFailure } from "./Settings.js"
import { request } from "./Shared.js"

const orDash = (value: string | null) => value ?? "-"

const revisionLine = (revision: RevisionSummary | null) =>
  revision === null ? "-" : `${revision.number} (saved ${revision.createdAt})`

export const renderPage = (page: PageState) =>
  table([
    ["slug", page.slug],
    ["kind", page.kind],
    ["title", page.title],
    ["version", `${page.version} (--if-match ${page.version})`],
    ["published", page.publishedRevision === null ? "no" : `revision ${page.publishedRevision.number} at ${orDash(page.publishedRevision.publishedAt)}`],
    ["latest", revisionLine(page.latestRevision)],
    ["updated", page.updatedAt]
  ])

const renderPages = (pages: ReadonlyArray<PageState>) =>
  pages.length === 0 ? "no pages" : table([
    ["SLUG", "KIND", "VERSION", "PUBLISHED", "LATEST", "TITLE"],
    ...pages.map((page) => [
      page.slug,
      page.kind,
      String(page.version),
      page.publishedRevision === null ? "-" : String(page.publishedRevision.number),
      page.latestRevision === null ? "-" : String(page.latestRevision.number),
      page.title
    ])
  ])

const renderRevisions = (revisions: ReadonlyArray<RevisionSummary>) =>
  revisions.length === 0 ? "no revisions" : table([
    ["NUMBER", "SAVED", "LAST PUBLISHED"],
    ...revisions.map((revision) => [String(revision.number), revision.createdAt, orDash(revision.publishedAt)])
  ])

const renderSaved = (saved: SavedDraft) => `saved revision ${saved.revision.number}\n${renderPage(saved.page)}`

const slug = Args.text({ name: "SLUG" }).pipe(Args.withDescription("page slug; nested pages look like docs/getting-started"))

const ifMatch = Options.text("if-match").pipe(
  Options.withDescription("the version the change is based on (from `pages show`); refused if the page moved on")
)

/** `7` or `"7"` as the header's entity tag. */
const entityTag = (value: string) => (value.startsWith("\"") ? value : `"${value}"`)

const list = Command.make("list", connectionOptions, (options) =>
  request(options, (api) => api.pageAdmin.list({ withResponse: true }), (result) => renderPages(result.items))).pipe(
    Command.withDescription("List every page with its version and revisions (pages:read)")
  )

const show = Command.make("show", { ...connectionOptions, slug }, (options) =>
  request(options, (api) => api.pageAdmin.get({ path: { slug: options.slug }, withResponse: true }), renderPage)).pipe(
    Command.withDescription("Show a page as editors see it, with its version (pages:read)")
  )

const revisions = Command.make("revisions", {
  ...connectionOptions,
  slug,
  number: Args.integer({ name: "NUMBER" }).pipe(Args.withDescription("print this revision's document"), Args.optional)
}, (options) =>
  Option.match(options.number, {
    onSome: (number) =>
      request(
        options,
        (api) => api.pageAdmin.revision({ path: { slug: options.slug, number }, withResponse: true }),
        (revision: Revision) => JSON.stringify(revision.document, null, 2)
      ),
    onNone: () =>
      request(
        options,
        (api) => api.pageAdmin.revisions({ path: { slug: options.slug }, withResponse: true }),
        (result) => renderRevisions(result.items)
      )
  })).pipe(Command.withDescription("List a page's revisions, or print one's document (pages:read)"))

const create = Command.make("create", {
  ...connectionOptions,
  slug,
  kind: Options.choice("kind", PageKind.literals).pipe(Options.withDescription("what the page is"), Options.withDefault("custom" as const)),
  title: Options.text("title").pipe(Options.withDescription("1-200 characters"))
}, (options) =>
  request(
    options,
    (api) => api.pageAdmin.create({ payload: { slug: options.slug, kind: options.kind, title: options.title }, withResponse: true }),
    renderPage
  )).pipe(Command.withDescription("Create a page without revisions (pages:write)"))

/** The document file as JSON; the contract's schema checks it when the request is built. */
const readDocument = (file: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)).pipe(
    Effect.mapError(() => new MarketFailure({ message: `unreadable_file: cannot read ${file}` })),
    Effect.flatMap((text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => new MarketFailure({ message: `invalid_document: ${file} is not JSON` })
      })
    )
  )

const draft = Command.make("draft", {
  ...connectionOptions,
  slug,
  ifMatch,
  file: Options.file("file", { exists: "yes" }).pipe(
    Options.withDescription("the document as JSON: {schemaVersion: 1, layout, meta, blocks}")
  )
}, (options) =>
  request(
    options,
    (api) =>
      Effect.flatMap(readDocument(options.file), (document) =>
        api.pageAdmin.saveDraft({
          path: { slug: options.slug },
          headers: { "if-match": entityTag(options.ifMatch) },
          // Checked against the contract's schema by the client before anything is sent.
          payload: { document: document as never },
          withResponse: true
        })),
    renderSaved
  )).pipe(Command.withDescription("Save a document as the page's next draft (pages:write)"))

const publish = Command.make("publish", {
  ...connectionOptions,
  slug,
  ifMatch,
  revision: Args.integer({ name: "REVISION" }).pipe(Args.withDescription("the revision number to publish (an older one rolls back)"))
}, (options) =>
  request(
    options,
    (api) =>
      api.pageAdmin.publish({
        path: { slug: options.slug },
        headers: { "if-match": entityTag(options.ifMatch) },
        payload: { revisionNumber: options.revision },
        withResponse: true
      }),
    renderPage
  )).pipe(Command.withDescription("Publish a revision; an older one rolls back (pages:publish)"))

const unpublish = Command.make("unpublish", { ...connectionOptions, slug, ifMatch }, (options) =>
  request(
    options,
    (api) =>
      api.pageAdmin.unpublish({
        path: { slug: options.slug },
        headers: { "if-match": entityTag(options.ifMatch) },
        withResponse: true
      }),
    renderPage
  )).pipe(Command.withDescription("Take a page off the public route (pages:publish)"))

export const pages = Command.make("pages").pipe(
  Command.withDescription("The page builder: pages, drafts, publishing (pages:* scopes)"),
  Command.withSubcommands([list, show, revisions, create, draft, publish, unpublish])
)
