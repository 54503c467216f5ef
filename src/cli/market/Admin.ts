/**
 * `clark market admin suspend|unsuspend ACCOUNT` and `clark market audit`: the admin's commands (scope
 * admin). A suspended account's every credential answers 403 until the suspension is lifted; the audit
 * log lists curator, publisher and admin actions newest first, a page at a time.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type { AccountSuspension } from "../../../schema/marketplace/AccountCredentials.js"
import type { AuditEntry, AuditPage } from "../../../schema/marketplace/Audit.js"
import { clip, table } from "../Output.js"
import { connectionOptions } from "./Settings.js"
import { given, optionalText, request } from "./Shared.js"

const account = Args.text({ name: "ACCOUNT" }).pipe(
  Args.withDescription("the account's id (usr_…, as the audit log and GET /me show it)")
)

const suspension = (result: AccountSuspension) =>
  result.suspendedAt === null ? `${result.id}: not suspended` : `${result.id}: suspended since ${result.suspendedAt}`

/** `suspend` and `unsuspend` differ only in the state they ask for. */
const suspensionCommand = (name: string, suspended: boolean, description: string) =>
  Command.make(name, {
    ...connectionOptions,
    account,
    reason: optionalText("reason", "why, up to 500 characters (kept in the audit log)")
  }, (options) =>
    request(
      options,
      (api) =>
        api.admin.suspend({
          path: { id: options.account },
          payload: { suspended, ...given({ reason: options.reason }) },
          withResponse: true
        }),
      suspension
    )).pipe(Command.withDescription(description))

const suspend = suspensionCommand("suspend", true, "Suspend an account: each of its credentials answers 403 until lifted")
const unsuspend = suspensionCommand("unsuspend", false, "Lift an account's suspension")

export const admin = Command.make("admin").pipe(
  Command.withDescription("Admin commands on accounts (scope admin)"),
  Command.withSubcommands([suspend, unsuspend])
)

/** A state as one short line: `{"suspendedAt":null}`; the whole of it is in `--json`. */
const state = (value: unknown) => (value === null || value === undefined ? "-" : clip(JSON.stringify(value), 60))

const renderAudit = (page: AuditPage) => {
  if (page.items.length === 0) return "no audit entries"
  const rows = table([
    ["AT", "ACTOR", "ACTION", "TARGET", "BEFORE", "AFTER"],
    ...page.items.map((entry: AuditEntry) => [
      entry.at,
      entry.actorId,
      entry.action,
      `${entry.targetKind}:${entry.target}`,
      state(entry.before),
      state(entry.after)
    ])
  ])
  return page.nextCursor === null ? rows : `${rows}\n\nmore: --cursor ${page.nextCursor}`
}

export const audit = Command.make("audit", {
  ...connectionOptions,
  limit: Options.integer("limit").pipe(Options.withDescription("entries per page, 1-100 (default 50)"), Options.optional),
  cursor: optionalText("cursor", "the `more: --cursor …` value of the previous page"),
  action: optionalText("action", "only this action, e.g. account.suspend or curation.status"),
  actor: optionalText("actor", "only actions by this account id"),
  target: optionalText("target", "only actions on this target (a package name, page slug or account id)")
}, (options) =>
  request(
    options,
    (api) =>
      api.admin.audit({
        urlParams: given({
          limit: options.limit,
          cursor: options.cursor,
          action: options.action,
          actorId: options.actor,
          target: options.target
        }),
        withResponse: true
      }),
    renderAudit
  )).pipe(Command.withDescription("Read the audit log of curator, publisher and admin actions, newest first (admin)"))
