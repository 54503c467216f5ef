/** The marketplace HTTP contract, shared by the server, the typed client and the CLI. */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { type OpenApiDocument, withoutComponents, withoutKeywordIds } from "../common/OpenApiDocument.js"

import { AdminGroup, CredentialsGroup } from "./AccountCredentials.js"
import { AccountProfile, DeleteAccountRequest, DeletedAccount, OwnedListings } from "./Account.js"
import { Category, CategoryList, Collection, CollectionCommand, CollectionList, CollectionState, SlugPath } from "./Catalog.js"
import { CurationResult, IdempotencyHeaders, SetFeaturedRequest, SetStatusRequest } from "./Curation.js"
import {
  BadRequestWire,
  ConflictWire,
  IdempotencyInProgressWire,
  IdempotencyKeyReusedWire,
  InternalErrorWire,
  NotFoundWire,
  RateLimitedWire,
  ValidationFailedWire
} from "./Errors.js"
import {
  InstallCoordinate,
  InstallParams,
  ListParams,
  PackageDetail,
  PackagePage,
  PackagePath,
  SearchPage,
  SearchParams,
  VersionList
} from "./Package.js"
import { PagePath, PageParams, PublishedPage } from "./Page.js"
import { PageAdminGroup } from "./PageAdmin.js"
import { PublishersGroup } from "./Publishers.js"
import { Authentication } from "./Security.js"
import { Health, UnhealthyWire } from "./System.js"
import { IndexJob, ReindexRequest, SubmissionList, SubmissionPath, SubmissionResult, SubmitRequest, Submission } from "./Submission.js"

export const markdownContentType = "text/markdown; charset=utf-8"
export const Markdown = HttpApiSchema.Text({ contentType: markdownContentType })

/** The description's own version (`info.version`); the API version is the `1` of `/api/v1`. */
export const descriptionVersion = "1.0.0"
export const apiTitle = "Clark Marketplace API"

/*
 * Each endpoint declares the errors the spec's route table gives it, and only
 * those; 500 `internal_error` is declared once, on the API, since every route
 * has it. 429 `rate_limited` is declared by every group but on health, which
 * is never limited (probes). 400 is `validation_failed` wherever a route reads a path, query or
 * body, plus `bad_request` where it reads a body (unreadable or oversized).
 * The error middleware (src/marketplace/http/ErrorEnvelope.ts) renders every
 * error from its own wire schema, declared here or not: what is declared here
 * is what the description and the typed client know.
 */

export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .addError(UnhealthyWire)
      .annotate(OpenApi.Description, "Liveness with a live database round-trip; 503 with the Health body when it fails")
  )
  .add(
    HttpApiEndpoint.get("openapi", "/openapi.json")
      .addSuccess(Schema.Unknown.annotations({ description: "This description (OpenAPI 3.1)" }))
      .addError(RateLimitedWire)
      .annotate(OpenApi.Description, "This description, as OpenAPI 3.1")
  )
{}

export class PackagesGroup extends HttpApiGroup.make("packages")
  .add(
    HttpApiEndpoint.get("list", "/packages")
      .setUrlParams(ListParams)
      .addSuccess(PackagePage)
      .addError(ValidationFailedWire)
  )
  .add(
    HttpApiEndpoint.get("get", "/packages/:name")
      .setPath(PackagePath)
      .addSuccess(PackageDetail)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.get("versions", "/packages/:name/versions")
      .setPath(PackagePath)
      .addSuccess(VersionList)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.get("install", "/packages/:name/install")
      .setPath(PackagePath)
      .setUrlParams(InstallParams)
      .addSuccess(InstallCoordinate)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .addError(RateLimitedWire)
{}

export class SearchGroup extends HttpApiGroup.make("search")
  .add(
    HttpApiEndpoint.get("search", "/search")
      .setUrlParams(SearchParams)
      .addSuccess(SearchPage)
      .addError(ValidationFailedWire)
  )
  .addError(RateLimitedWire)
{}

export class CatalogGroup extends HttpApiGroup.make("catalog")
  .add(HttpApiEndpoint.get("categories", "/categories").addSuccess(CategoryList))
  .add(
    HttpApiEndpoint.get("category", "/categories/:slug")
      .setPath(SlugPath)
      .addSuccess(Category)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(HttpApiEndpoint.get("collections", "/collections").addSuccess(CollectionList))
  .add(
    HttpApiEndpoint.get("collection", "/collections/:slug")
      .setPath(SlugPath)
      .addSuccess(Collection)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .addError(RateLimitedWire)
{}

export class PagesGroup extends HttpApiGroup.make("pages")
  .add(
    HttpApiEndpoint.get("page", "/pages/:slug")
      .setPath(PagePath)
      .setUrlParams(PageParams)
      .addSuccess(PublishedPage)
      .addSuccess(Markdown)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .addError(RateLimitedWire)
{}

/** 401 and 403 come with the Authentication middleware (its `failure`). */
export class AccountGroup extends HttpApiGroup.make("account")
  .add(HttpApiEndpoint.get("me", "/me").addSuccess(AccountProfile))
  .add(
    HttpApiEndpoint.del("deleteMe", "/me")
      .setPayload(DeleteAccountRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(DeletedAccount)
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(ConflictWire)
      .addError(IdempotencyInProgressWire)
      // Beyond the spec's row for DELETE /me: a key first used on another route is refused here as on the
      // curation routes (docs/decisions.md, "Errors each route declares").
      .addError(IdempotencyKeyReusedWire)
  )
  .add(HttpApiEndpoint.get("myPackages", "/me/packages").addSuccess(OwnedListings))
  .middleware(Authentication)
  .addError(RateLimitedWire)
{}

export class CurationGroup extends HttpApiGroup.make("curation")
  .add(
    HttpApiEndpoint.post("setStatus", "/curation/packages/:name/status")
      .setPath(PackagePath)
      .setHeaders(IdempotencyHeaders)
      .setPayload(SetStatusRequest)
      .addSuccess(CurationResult)
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(IdempotencyInProgressWire)
      .addError(IdempotencyKeyReusedWire)
  )
  .add(
    HttpApiEndpoint.post("setFeatured", "/curation/packages/:name/featured")
      .setPath(PackagePath)
      .setHeaders(IdempotencyHeaders)
      .setPayload(SetFeaturedRequest)
      .addSuccess(CurationResult)
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(IdempotencyInProgressWire)
      .addError(IdempotencyKeyReusedWire)
  )
  .add(
    HttpApiEndpoint.get("collection", "/curation/collections/:slug")
      .setPath(SlugPath)
      .addSuccess(CollectionState)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.post("collectionCommand", "/curation/collections/:slug")
      .setPath(SlugPath)
      .setHeaders(IdempotencyHeaders)
      .setPayload(CollectionCommand)
      .addSuccess(CollectionState)
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(IdempotencyInProgressWire)
      .addError(IdempotencyKeyReusedWire)
  )
  .middleware(Authentication)
  .addError(RateLimitedWire)
{}

/**
 * Package submissions (scope packages:submit) and a curator's re-index (packages:curate): the spec's
 * `publish` area, decided in docs/decisions.md ("Submissions and the indexer").
 */
export class PublishGroup extends HttpApiGroup.make("publish")
  .add(
    HttpApiEndpoint.post("submit", "/submissions")
      .setPayload(SubmitRequest)
      .addSuccess(SubmissionResult, { status: 202 })
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .annotate(OpenApi.Description, "Ask for a registry package version (or its latest) to be indexed; the same again answers the existing submission with created false")
  )
  .add(HttpApiEndpoint.get("submissions", "/submissions").addSuccess(SubmissionList))
  .add(
    HttpApiEndpoint.get("submission", "/submissions/:id")
      .setPath(SubmissionPath)
      .addSuccess(Submission)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.post("reindex", "/curation/packages/:name/reindex")
      .setPath(PackagePath)
      .setPayload(ReindexRequest)
      .addSuccess(IndexJob, { status: 202 })
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .annotate(OpenApi.Description, "A curator's re-index of a catalogue package's version (or its latest), written anew")
  )
  .middleware(Authentication)
  .addError(RateLimitedWire)
{}

const errorRef = /^#\/components\/schemas\/Error\.([a-z_]+)$/

/** Each error response described by the codes it may carry (the generator names only the first schema). */
const withErrorCodes = (document: OpenApiDocument): OpenApiDocument => {
  for (const item of Object.values<Record<string, any>>(document.paths ?? {})) {
    for (const operation of Object.values<Record<string, any>>(item)) {
      for (const [status, response] of Object.entries<Record<string, any>>(operation.responses ?? {})) {
        const schema = response.content?.["application/json"]?.schema
        const refs: Array<unknown> = schema?.anyOf?.map((member: any) => member.$ref) ?? [schema?.$ref]
        const codes = refs.flatMap((ref) => typeof ref === "string" ? (errorRef.exec(ref)?.slice(1) ?? []) : [])
        if (Number(status) >= 400 && codes.length > 0) response.description = codes.join(", ")
      }
    }
  }
  return document
}

const pageRoute = "/api/v1/pages/{slug}"

/**
 * The page's 200 as two media types: the generator files every success of one
 * status under the content type of the first (application/json), the Markdown
 * string included.
 */
const withMarkdownPage = (document: OpenApiDocument): OpenApiDocument => {
  const ok = document.paths?.[pageRoute]?.get?.responses?.["200"]
  if (ok === undefined) return document
  ok.content = {
    "application/json": { schema: { $ref: "#/components/schemas/PublishedPage" } },
    [markdownContentType]: { schema: { type: "string" } }
  }
  ok.description = "The published page: JSON, or Markdown with format=md"
  return document
}

/**
 * The served description: valid OpenAPI 3.1 (no duplicate `$id`s, see
 * OpenApiDocument.ts), without Effect's own `HttpApiDecodeError` (the error
 * middleware answers 400 `validation_failed` instead), and the page route's
 * Markdown under its own media type; each error response names its codes.
 */
// withErrorCodes and withMarkdownPage change the document in place: withoutComponents hands them fresh copies
// of every path and response.
export const describeMarketplace = (document: OpenApiDocument): OpenApiDocument =>
  withErrorCodes(withMarkdownPage(withoutComponents(["HttpApiDecodeError"])(withoutKeywordIds(document))))

export class MarketplaceApi extends HttpApi.make("marketplace")
  .add(SystemGroup)
  .add(PackagesGroup)
  .add(SearchGroup)
  .add(CatalogGroup)
  .add(PagesGroup)
  .add(AccountGroup)
  .add(CurationGroup)
  .add(PageAdminGroup)
  .add(CredentialsGroup)
  .add(AdminGroup)
  .add(PublishGroup)
  .add(PublishersGroup)
  .addError(InternalErrorWire)
  .prefix("/api/v1")
  .annotateContext(
    OpenApi.annotations({
      title: apiTitle,
      version: descriptionVersion,
      description: "Discovery and curation of packages distributed by the public package registry.",
      transform: describeMarketplace
    })
  )
{}
