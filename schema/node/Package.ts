/**
 * Installing packages, deciding their approvals, storing their credentials,
 * and the public page a provider returns the browser to after connecting a
 * package's account.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PathSegment } from "../common/Text.js"
import { refusals } from "./Errors.js"
import { Decision, DecisionRequest } from "./Work.js"
import { LookupId } from "./Instance.js"
import { Authenticated, PersonOnly } from "./Security.js"
import { Facet, Permission } from "../marketplace/Package.js"

/** A package id in the node's directory: a registry name (maybe scoped) or a local folder's id. */
export const PackageId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(214))

export const Digest = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

/**
 * The package chosen in the directory. `localDigest` is the listing's
 * `contentDigest`, sent back by the Install button for a package listed by a
 * local path; a change since the listing is 409 DIGEST_MISMATCH.
 */
export const InstallRequest = Schema.Struct({
  packageId: PackageId,
  version: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))),
  localDigest: Schema.optional(Digest)
}).annotations({ identifier: "InstallRequest" })
export type InstallRequest = typeof InstallRequest.Type

/** The package now runs from the node's cache copy bound to `digest`. */
export const Installed = Schema.Struct({
  outcome: Schema.Literal("installed"),
  packageId: Schema.String,
  version: Schema.String,
  digest: Schema.String,
  pendingCapabilities: Schema.Int.pipe(Schema.nonNegative()),
  deniedCapabilities: Schema.Int.pipe(Schema.nonNegative())
}).annotations({ identifier: "Installed" })
export type Installed = typeof Installed.Type

/** 202 (not an error): the execution mode asks first; nothing installed, the item waits in the inbox. */
export const InstallApprovalRequired = Schema.Struct({
  code: Schema.Literal("APPROVAL_REQUIRED"),
  message: Schema.String,
  approvalId: Schema.String
}).annotations({ identifier: "InstallApprovalRequired" })

export const PackageApprovalPath = Schema.Struct({ approvalId: LookupId })

/**
 * A decided package approval (an install or a capability). A granted install
 * approval carries what was installed.
 */
export const PackageApprovalDecided = Schema.Struct({
  approvalId: Schema.String,
  kind: Schema.Literal("install", "capability"),
  decision: Decision,
  installed: Schema.optional(Installed)
}).annotations({ identifier: "PackageApprovalDecided" })

/**
 * A credential a package's service uses, kept by the secret broker bound to that package and handed to its
 * service only (docs/decisions.md, "Package credentials"). The name is folded (case, `-`, `.`, `:`) to its
 * canonical form; the map tile key's name and packages declaring themselves its consumers are refused.
 */
export const CredentialWrite = Schema.Struct({
  packageId: PackageId,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  // Never quoted back in a refusal (Schema's default messages repeat the value).
  value: Schema.Redacted(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(8192)).annotations({
      message: () => ({ message: "must be a string of 1 to 8192 characters", override: true })
    })
  )
}).annotations({
  identifier: "CredentialWrite",
  // Not an object at all: the default message would quote the body, value included. (A field's own issue keeps
  // its own message: this one is used only when the body itself is not an object.)
  message: () => "must be an object {packageId, name, value}"
})

/** Never the value. `name` is the canonical name the credential is stored and granted under. */
export const CredentialStored = Schema.Struct({
  packageId: Schema.String,
  name: Schema.String,
  stored: Schema.Literal(true)
}).annotations({ identifier: "CredentialStored" })

/**
 * A connection the node is ready to receive: `state` goes to the provider with the authorization request
 * (the only time the node shows it), `callbackUrl` is the redirect address to register and send.
 */
export const ConnectionStarted = Schema.Struct({
  packageId: Schema.String,
  state: Schema.String,
  callbackUrl: Schema.String,
  expiresAt: Schema.String
}).annotations({ identifier: "ConnectionStarted" })

/** Scoped package ids arrive URL-encoded. Any id is taken: one the node never issued a state for gets a page. */
export const ConnectionCallbackPath = Schema.Struct({ packageId: PathSegment(Schema.String) })

/**
 * What a provider appends (OAuth 2.0 redirect parameters); the single-use `state` authenticates the request.
 * Anything decodes (a repeated parameter is an array), so every answer is a page and no refusal can quote the
 * code or the state back.
 */
const CallbackParam = Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)))
export const ConnectionCallbackParams = Schema.Struct({
  state: CallbackParam,
  code: CallbackParam,
  error: CallbackParam,
  error_description: CallbackParam
})

/** A page of the callback: short, no script, never the code or the state. */
export const Html = HttpApiSchema.Text({ contentType: "text/html; charset=utf-8" })

/** The callback's refusals are pages too: the reader is a browser. */
const callbackPages = {
  400: "No state, a repeated parameter, a code too long, a return without a code, or a package that takes no credentials; nothing stored",
  404: "A state the node does not hold for this package (unknown, spent, expired, another package's), or a package uninstalled since; nothing stored",
  503: "The secret broker could not store the code"
} as const
const callbackPage = (status: keyof typeof callbackPages) =>
  Html.annotations({ ...HttpApiSchema.annotations({ status }), description: callbackPages[status] })

/**
 * `HttpApi.make` declares its own JSON decode error at 400 on every route, which makes the generator describe
 * this route's 400 page as JSON: described here as the page it is (the route decodes anything, so that
 * error never leaves it).
 */
const describeCallbackPages = (operation: Record<string, any>) => ({
  ...operation,
  responses: {
    ...operation.responses,
    400: { description: callbackPages[400], content: { "text/html; charset=utf-8": { schema: { type: "string" } } } }
  }
})

// ---------------------------------------------------------------------------
// The directory (not shown in the spec: decided in docs/decisions.md, "Package directory")

/** What is installed of a package, and whether the directory still lists exactly that. */
export const InstalledState = Schema.Struct({
  version: Schema.String,
  digest: Schema.String,
  installedAt: Schema.String,
  /** False once the listing changed (another version or digest): the package answers 409 NOT_INSTALLED. */
  current: Schema.Boolean
}).annotations({ identifier: "InstalledState" })

/**
 * One installable package. `digest` is what an install is bound to: the content digest the node computed for
 * a local folder (`sha256:…`), the registry integrity the marketplace lists for a registry package.
 */
export const Listing = Schema.Struct({
  packageId: PackageId,
  source: Schema.Literal("local", "marketplace"),
  name: Schema.String,
  version: Schema.String,
  description: Schema.String,
  digest: Digest,
  /** For a local folder, the same as `digest`; what the Install button sends back as `localDigest`. */
  contentDigest: Schema.NullOr(Digest),
  facets: Schema.Array(Facet),
  permissions: Schema.Array(Permission),
  /** The folder the person added (local listings only). */
  path: Schema.NullOr(Schema.String),
  installed: Schema.NullOr(InstalledState)
}).annotations({ identifier: "Listing" })
export type Listing = typeof Listing.Type

export const DirectoryParams = Schema.Struct({
  q: Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
})

export const Directory = Schema.Struct({
  packages: Schema.Array(Listing),
  /** Why the marketplace's part is missing (not configured, unreachable), or null when it answered. */
  marketplace: Schema.Struct({ status: Schema.Literal("ok", "not-configured", "unreachable"), url: Schema.NullOr(Schema.String) })
}).annotations({ identifier: "Directory" })

export const PackagePath = Schema.Struct({ packageId: PathSegment(PackageId) })

/** A folder on this computer to list as a package. */
export const AddLocalRequest = Schema.Struct({
  path: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096))
}).annotations({ identifier: "AddLocalRequest" })

// ---------------------------------------------------------------------------
// Install approvals and their event stream

/** `refused`: a granted decision whose install was refused (the files changed); `failed`: its install failed. */
export const ApprovalStatus = Schema.Literal("waiting", "granted", "denied", "expired", "refused", "failed")

/** An install approval as the app and the CLI read it (GET /packages/approvals/{approvalId}). */
export const InstallApproval = Schema.Struct({
  approvalId: Schema.String,
  kind: Schema.Literal("install-approval"),
  packageId: Schema.String,
  source: Schema.Literal("local", "marketplace"),
  version: Schema.String,
  /** What a decision must send back as `digest`. */
  operationDigest: Schema.String,
  asksFor: Schema.Array(Permission),
  riskTier: Schema.Literal("declarative", "sandboxed", "reaches-out", "native"),
  status: ApprovalStatus,
  requestedAt: Schema.String,
  expiresAt: Schema.String,
  decidedAt: Schema.NullOr(Schema.String),
  /** The surface that asked (`person`, `cli-api`, …). */
  askedBy: Schema.String
}).annotations({ identifier: "InstallApproval" })
export type InstallApproval = typeof InstallApproval.Type

export const ApprovalOutcome = Schema.Literal("asked", "installed", "denied", "expired", "refused", "failed")
export type ApprovalOutcome = typeof ApprovalOutcome.Type

/** One entry of the `package.install-approval` event stream; `seq` grows by one per entry. */
export const ApprovalEvent = Schema.Struct({
  seq: Schema.Int,
  approvalId: Schema.String,
  packageId: Schema.String,
  version: Schema.String,
  outcome: ApprovalOutcome,
  /** Why a granted install was refused or failed (DigestMismatch, LocalSourceUnreadable, …), null otherwise. */
  reason: Schema.NullOr(Schema.String),
  at: Schema.String
}).annotations({ identifier: "ApprovalEvent" })
export type ApprovalEvent = typeof ApprovalEvent.Type

export const ApprovalEventsParams = Schema.Struct({
  after: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative())),
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 500)))
})
export const ApprovalEvents = Schema.Struct({
  stream: Schema.Literal("package.install-approval"),
  events: Schema.Array(ApprovalEvent)
}).annotations({ identifier: "ApprovalEvents" })

export class PackagesGroup extends HttpApiGroup.make("packages")
  .add(
    HttpApiEndpoint.get("directory", "/packages")
      .setUrlParams(DirectoryParams)
      .addSuccess(Directory)
      .addError(refusals("INVALID_INPUT"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("listing", "/packages/listing/:packageId")
      .setPath(PackagePath)
      .addSuccess(Listing)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "LOCAL_SOURCE_UNREADABLE"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("addLocal", "/packages/local")
      .setPayload(AddLocalRequest)
      .addSuccess(Listing, { status: 201 })
      .addError(refusals("INVALID_INPUT", "LOCAL_SOURCE_UNREADABLE"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("requestInstall", "/packages/install-requests")
      .setPayload(InstallRequest)
      .addSuccess(InstallApprovalRequired, { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "LOCAL_SOURCE_UNREADABLE", "POLICY_REFUSED", "RESOURCE_NOT_FOUND", "DIGEST_MISMATCH",
        "DECLARED_REACH_MISMATCH", "PACKAGE_CACHE_UNAVAILABLE", "SERVICE_UNREACHABLE"
      ))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("approval", "/packages/approvals/:approvalId")
      .setPath(PackageApprovalPath)
      .addSuccess(InstallApproval)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("approvalEvents", "/packages/approval-events")
      .setUrlParams(ApprovalEventsParams)
      .addSuccess(ApprovalEvents)
      .addError(refusals("INVALID_INPUT"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("install", "/packages/install")
      .setPayload(InstallRequest)
      .addSuccess(Installed)
      .addSuccess(InstallApprovalRequired, { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "LOCAL_SOURCE_UNREADABLE", "POLICY_REFUSED", "RESOURCE_NOT_FOUND", "DIGEST_MISMATCH",
        "DECLARED_REACH_MISMATCH", "PACKAGE_CACHE_UNAVAILABLE", "SERVICE_UNREACHABLE"
      ))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.post("decideApproval", "/packages/approvals/:approvalId/decision")
      .setPath(PackageApprovalPath)
      .setPayload(DecisionRequest)
      .addSuccess(PackageApprovalDecided)
      .addError(refusals(
        "INVALID_INPUT", "LOCAL_SOURCE_UNREADABLE", "POLICY_REFUSED", "APPROVAL_FORGED", "RESOURCE_NOT_FOUND",
        "DIGEST_MISMATCH", "DECLARED_REACH_MISMATCH", "APPROVAL_ALREADY_DECIDED", "APPROVAL_EXPIRED",
        "PACKAGE_CACHE_UNAVAILABLE", "SERVICE_UNREACHABLE"
      ))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.post("storeCredential", "/credentials")
      .setPayload(CredentialWrite)
      .addSuccess(CredentialStored)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "SECRET_STORE_UNAVAILABLE"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("startConnection", "/connections/:packageId/start")
      .setPath(PackagePath)
      .addSuccess(ConnectionStarted)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("connectionCallback", "/connections/callback/:packageId")
      .setPath(ConnectionCallbackPath)
      .setUrlParams(ConnectionCallbackParams)
      .addSuccess(Html)
      .addError(callbackPage(400))
      .addError(callbackPage(404))
      .addError(callbackPage(503))
      .annotate(OpenApi.Transform, describeCallbackPages)
  )
{}
