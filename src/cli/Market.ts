/**
 * `clark market …`: a client of a running marketplace through the typed client
 * derived from its HttpApi contract, with a command for every operation:
 * health, packages and search, categories, collections, pages, the signed-in
 * account and its credentials, the curator's and the admin's commands.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Option } from "effect"
import { Isolation, Sort } from "../../schema/marketplace/Package.js"
import { me } from "./market/Account.js"
import { admin, audit } from "./market/Admin.js"
import { collection, curate } from "./market/Curation.js"
import { devices, grants } from "./market/Links.js"
import { pages } from "./market/Pages.js"
import { publisher } from "./market/Publishers.js"
import { tokens } from "./market/Tokens.js"
import { categories, collections, health, page, versions } from "./market/Reads.js"
import * as Render from "./market/Render.js"
import { connectionOptions, defaultMarketplaceUrl } from "./market/Settings.js"
import { given, optionalText, packageName, request, splitVersion } from "./market/Shared.js"
import { submit } from "./market/Submit.js"

// ---------------------------------------------------------------------------
// packages

const search = Command.make("search", {
  ...connectionOptions,
  query: Args.text({ name: "QUERY" }).pipe(
    Args.withDescription("full-text query (words are joined); without one, packages browse by recency"),
    Args.repeated
  ),
  category: optionalText("category", "category slug"),
  kind: optionalText("kind", "facet kind of the latest version"),
  isolation: Options.choice("isolation", Isolation.literals).pipe(
    Options.withDescription("facet isolation of the latest version"),
    Options.optional
  ),
  platform: optionalText("platform", "platform of the latest version"),
  publisher: optionalText("publisher", "publisher slug"),
  curation: Options.choice("curation", ["listed", "featured"]).pipe(
    Options.withDescription("curation status"),
    Options.optional
  ),
  sort: Options.choice("sort", Sort.literals).pipe(
    Options.withDescription("order of results; lists through GET /packages, since search orders by relevance itself"),
    Options.optional
  ),
  limit: Options.integer("limit").pipe(Options.withDescription("results per page, 1-100 (default 20)"), Options.optional),
  cursor: optionalText("cursor", "the `more: --cursor …` value of the previous page")
}, (options) => {
  const query = options.query.join(" ").trim()
  const filters = given({
    q: Option.liftPredicate(query, (q) => q !== ""),
    category: options.category,
    kind: options.kind,
    isolation: options.isolation,
    platform: options.platform,
    publisher: options.publisher,
    curation: options.curation,
    limit: options.limit,
    cursor: options.cursor
  })
  return request(
    options,
    (api) =>
      Option.match(options.sort, {
        onNone: () => api.search.search({ urlParams: filters, withResponse: true }),
        onSome: (sort) => api.packages.list({ urlParams: { ...filters, sort }, withResponse: true })
      }),
    (page) => Render.packageTable(page.items, page.nextCursor)
  )
}).pipe(Command.withDescription("Search the public packages. Through GET /search, or GET /packages with --sort."))

const show = Command.make("show", { ...connectionOptions, name: packageName }, (options) =>
  request(
    options,
    (api) => api.packages.get({ path: { name: options.name }, withResponse: true }),
    Render.packageDetail
  )).pipe(Command.withDescription("Show a package: its fields, latest version and versions"))

// @effect/cli reserves `--version` for the program's own version, so the version rides on the name, as with npm;
// `install NAME --version V` is folded into that form before parsing (market/InstallVersion.ts).
const install = Command.make("install", {
  ...connectionOptions,
  spec: Args.text({ name: "NAME[@VERSION]" }).pipe(
    Args.withDescription("registry package name, optionally with a published version: @scope/name@1.2.0, or --version 1.2.0 (default: the latest)")
  )
}, (options) => {
  const { name, version } = splitVersion(options.spec)
  return request(
    options,
    (api) => api.packages.install({ path: { name }, urlParams: given({ version }), withResponse: true }),
    Render.installCoordinate
  )
}).pipe(
  Command.withDescription(
    "Print a package's install coordinate. Its version, integrity, the command line and the app's deep link."
  )
)

export const market = Command.make("market").pipe(
  Command.withDescription(
    "Use a marketplace's API. Every command takes --url, --token and --json; " +
      "each value comes from the flag, else CLARK_MARKETPLACE_URL / CLARK_MARKETPLACE_TOKEN, " +
      "else the config file (CLARK_CONFIG, else $XDG_CONFIG_HOME/clark/config.json, else ~/.config/clark/config.json: " +
      `{"marketplace": {"url": …, "token": …}}), else ${defaultMarketplaceUrl} for the URL`
  ),
  Command.withSubcommands([
    health,
    search,
    show,
    versions,
    install,
    categories,
    collections,
    page,
    me,
    curate,
    collection,
    submit,
    pages,
    tokens,
    publisher,
    devices,
    grants,
    admin,
    audit
  ])
)
