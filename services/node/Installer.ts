/**
 * Installing packages (the spec's "Install a package" and "Install approval"). The checks run in the spec's
 * order and every one is bound to the content digest: the digest the listing showed, the bytes copied into
 * the cache, the manifest read from that copy, the reach its listing showed, then the install policy, which
 * installs, asks the person (an approval that waits ten minutes) or refuses.
 */
import { Context, type Effect, type Option } from "effect"
import type { Decision } from "../../schema/node/Work.js"
import type { InstallApproval, Installed, InstallRequest } from "../../schema/node/Package.js"
import type { ApprovalError, InstallError } from "./PackageErrors.js"

/** Who asks: the person on their own surface, or a machine surface (the CLI, MCP, the relay). */
export type Asker = { readonly kind: "person" | "machine"; readonly surface: string }

export type InstallOutcome =
  | ({ readonly _tag: "Installed" } & Installed)
  | { readonly _tag: "ApprovalRequired"; readonly approvalId: string; readonly packageId: string; readonly version: string }

export interface DecisionOutcome {
  readonly approvalId: string
  readonly decision: Decision
  readonly installed?: Installed
}

/** An approval waits this long for a decision, then expires with a notice. */
export const approvalLifetimeMillis = 10 * 60 * 1000

export class Installer extends Context.Tag("clark/node/Installer")<Installer, {
  readonly install: (request: InstallRequest, asker: Asker) => Effect.Effect<InstallOutcome, InstallError>
  readonly decide: (
    approvalId: string,
    decision: Decision,
    digest: string
  ) => Effect.Effect<DecisionOutcome, ApprovalError>
  readonly approval: (approvalId: string) => Effect.Effect<Option.Option<InstallApproval>>
}>() {}
