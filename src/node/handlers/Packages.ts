/**
 * The package routes: the directory, local folders, installs and their approvals, credentials and connections
 * (./Credentials.ts). POST /packages/install is
 * person-only (the route's middleware); a machine surface asks through POST /packages/install-requests,
 * which never installs by itself.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { type Asker, Installer, type InstallOutcome } from "../../../services/node/Installer.js"
import { PackageDirectory } from "../../../services/node/PackageDirectory.js"
import { ApprovalNotFound, PackageNotListed } from "../../../services/node/PackageErrors.js"
import { PackageRecords } from "../../../services/node/PackageRecords.js"
import { wire } from "../http/Errors.js"
import { connectionCallback, startConnection, storeCredential } from "./Credentials.js"

/** The 202 of an install that waits for the person. */
const approvalRequired = (outcome: Extract<InstallOutcome, { _tag: "ApprovalRequired" }>) =>
  HttpServerResponse.unsafeJson({
    code: "APPROVAL_REQUIRED",
    message: `Installing ${outcome.packageId} ${outcome.version} waits for the person's approval`,
    approvalId: outcome.approvalId
  }, { status: 202 })

const asker = Effect.map(CurrentCaller, (caller): Asker => ({
  kind: caller.surface === "person" ? "person" : "machine",
  surface: caller.surface
}))

export const PackagesLive = HttpApiBuilder.group(NodeApi, "packages", (handlers) =>
  Effect.gen(function*() {
    const directory = yield* PackageDirectory
    const installer = yield* Installer
    const records = yield* PackageRecords

    return handlers
      .handle("directory", ({ urlParams }) => directory.list(urlParams.q))
      .handle("listing", ({ path }) =>
        Effect.flatMap(directory.find(path.packageId), Option.match({
          onNone: () => Effect.fail(new PackageNotListed({ packageId: path.packageId })),
          onSome: Effect.succeed
        })).pipe(wire))
      .handle("addLocal", ({ payload }) => directory.addLocal(payload.path).pipe(wire))
      .handle("install", ({ payload }) =>
        Effect.gen(function*() {
          const outcome = yield* installer.install(payload, yield* asker)
          if (outcome._tag === "ApprovalRequired") return approvalRequired(outcome)
          const { _tag, ...installed } = outcome
          return installed
        }).pipe(wire))
      .handle("requestInstall", ({ payload }) =>
        Effect.gen(function*() {
          // Whoever asks here, the person decides: the request only ever waits for their approval.
          const outcome = yield* installer.install(payload, { kind: "machine", surface: (yield* asker).surface })
          return outcome._tag === "ApprovalRequired"
            ? approvalRequired(outcome)
            : yield* Effect.dieMessage("a machine request installed without approval")
        }).pipe(wire))
      .handle("approval", ({ path }) =>
        Effect.flatMap(installer.approval(path.approvalId), Option.match({
          onNone: () => Effect.fail(new ApprovalNotFound({ approvalId: path.approvalId })),
          onSome: Effect.succeed
        })).pipe(wire))
      .handle("approvalEvents", ({ urlParams }) =>
        Effect.map(records.events(urlParams.after ?? 0, urlParams.limit ?? 100), (events) => ({
          stream: "package.install-approval" as const,
          events
        })))
      .handle("decideApproval", ({ path, payload }) =>
        Effect.map(installer.decide(path.approvalId, payload.decision, payload.digest), (decided) => ({
          ...decided,
          kind: "install" as const
        })).pipe(wire))
      .handle("storeCredential", storeCredential)
      .handle("startConnection", startConnection)
      .handle("connectionCallback", connectionCallback)
  }))
