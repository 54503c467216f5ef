/** The marketplace HTTP contract, shared by the server, the typed client and the CLI. */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { withoutKeywordIds } from "../common/OpenApiDocument.js"

import { AccountProfile, DeleteAccountRequest, DeletedAccount, OwnedListings } from "./Account.js"
import { Category, CategoryList, Collection, CollectionCommand, CollectionList, CollectionState, SlugPath } from "./Catalog.js"
import { CurationResult, IdempotencyHeaders, SetFeaturedRequest, SetStatusRequest } from "./Curation.js"
import {
  BadRequestWire,
  ConflictWire,
  ForbiddenWire,
  IdempotencyInProgressWire,
  IdempotencyKeyReusedWire,
  InternalErrorWire,
  NotImplementedWire,
  NotFoundWire,
  RateLimitedWire,
  UnauthorizedWire,
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
import { Authentication } from "./Security.js"
import { Health, UnhealthyWire } from "./System.js"

export const Markdown = HttpApiSchema.Text({ contentType: "text/markdown; charset=utf-8" })

export class SystemGroup extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Health).addError(UnhealthyWire))
  .annotate(OpenApi.Description, "Liveness with a live database round-trip")
{}

export class PackagesGroup extends HttpApiGroup.make("packages")
  .add(
    HttpApiEndpoint.get("list", "/packages").setUrlParams(ListParams).addSuccess(PackagePage)
  )
  .add(
    HttpApiEndpoint.get("get", "/packages/:name").setPath(PackagePath).addSuccess(PackageDetail).addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.get("versions", "/packages/:name/versions")
      .setPath(PackagePath)
      .addSuccess(VersionList)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.get("install", "/packages/:name/install")
      .setPath(PackagePath)
      .setUrlParams(InstallParams)
      .addSuccess(InstallCoordinate)
      .addError(NotFoundWire)
  )
{}

export class SearchGroup extends HttpApiGroup.make("search")
  .add(HttpApiEndpoint.get("search", "/search").setUrlParams(SearchParams).addSuccess(SearchPage))
{}

export class CatalogGroup extends HttpApiGroup.make("catalog")
  .add(HttpApiEndpoint.get("categories", "/categories").addSuccess(CategoryList))
  .add(HttpApiEndpoint.get("category", "/categories/:slug").setPath(SlugPath).addSuccess(Category).addError(NotFoundWire))
  .add(HttpApiEndpoint.get("collections", "/collections").addSuccess(CollectionList))
  .add(
    HttpApiEndpoint.get("collection", "/collections/:slug").setPath(SlugPath).addSuccess(Collection).addError(NotFoundWire)
  )
{}

export class PagesGroup extends HttpApiGroup.make("pages")
  .add(
    HttpApiEndpoint.get("page", "/pages/:slug")
      .setPath(PagePath)
      .setUrlParams(PageParams)
      .addSuccess(PublishedPage)
      .addSuccess(Markdown)
      .addError(NotFoundWire)
  )
{}

export class AccountGroup extends HttpApiGroup.make("account")
  .add(HttpApiEndpoint.get("me", "/me").addSuccess(AccountProfile))
  .add(
    HttpApiEndpoint.del("deleteMe", "/me")
      .setPayload(DeleteAccountRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(DeletedAccount)
      .addError(ConflictWire)
      .addError(IdempotencyInProgressWire)
      .addError(IdempotencyKeyReusedWire)
  )
  .add(HttpApiEndpoint.get("myPackages", "/me/packages").addSuccess(OwnedListings))
  .middleware(Authentication)
  .addError(UnauthorizedWire)
  .addError(ForbiddenWire)
{}


export class CurationGroup extends HttpApiGroup.make("curation")
  .add(
    HttpApiEndpoint.post("setStatus", "/curation/packages/:name/status")
      .setPath(PackagePath)
      .setHeaders(IdempotencyHeaders)
      .setPayload(SetStatusRequest)
      .addSuccess(CurationResult)
  )
  .add(
    HttpApiEndpoint.post("setFeatured", "/curation/packages/:name/featured")
      .setPath(PackagePath)
      .setHeaders(IdempotencyHeaders)
      .setPayload(SetFeaturedRequest)
      .addSuccess(CurationResult)
  )
  .add(HttpApiEndpoint.get("collection", "/curation/collections/:slug").setPath(SlugPath).addSuccess(CollectionState))
  .add(
    HttpApiEndpoint.post("collectionCommand", "/curation/collections/:slug")
      .setPath(SlugPath)
      .setHeaders(IdempotencyHeaders)
      .setPayload(CollectionCommand)
      .addSuccess(CollectionState)
  )
  .middleware(Authentication)
  .addError(UnauthorizedWire)
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .addError(ConflictWire)
  .addError(IdempotencyInProgressWire)
  .addError(IdempotencyKeyReusedWire)
{}

export class MarketplaceApi extends HttpApi.make("marketplace")
  .add(SystemGroup)
  .add(PackagesGroup)
  .add(SearchGroup)
  .add(CatalogGroup)
  .add(PagesGroup)
  .add(AccountGroup)
  .add(CurationGroup)
  .addError(ValidationFailedWire)
  .addError(BadRequestWire)
  .addError(InternalErrorWire)
  .addError(NotImplementedWire)
  .addError(RateLimitedWire)
  .prefix("/api/v1")
  .annotateContext(
    OpenApi.annotations({
      title: "Clark Marketplace API",
      version: "1.0.0",
      description: "Discovery and curation of packages distributed by the public package registry.",
      // Valid OpenAPI 3.1: no duplicate `$id` from Schema.Unknown and its kin (see OpenApiDocument.ts).
      transform: withoutKeywordIds
    })
  )
{}

