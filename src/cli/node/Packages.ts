/** What `clark node packages …` and `clark node install` run, through the node's typed client. */
import { Console, Duration, Effect, Option } from "effect"
import * as path from "node:path"
import type { InstallApproval, Listing } from "../../../schema/node/Package.js"
import type { AddLocalOptions, InstallOptions, ListOptions, ShowOptions } from "../NodePackages.js"
import { clip, table } from "../Output.js"
import { ClientFailure, connect, printRaw, runCommand } from "./Client.js"

const installedText = (listing: Listing) =>
  listing.installed === null ? "no" : listing.installed.current ? listing.installed.version : `${listing.installed.version} (listing changed)`

export const list = (options: ListOptions) =>
  runCommand(Effect.gen(function*() {
    const { api } = yield* connect(options)
    const [directory, response] = yield* api.packages.directory({
      urlParams: Option.match(options.query, { onNone: () => ({}), onSome: (q) => ({ q }) }),
      withResponse: true
    })
    if (options.json) return yield* printRaw(response)
    yield* Console.log(
      directory.packages.length === 0 ? "no packages" : table([
        ["PACKAGE", "VERSION", "SOURCE", "INSTALLED", "DESCRIPTION"],
        ...directory.packages.map((p) => [p.packageId, p.version, p.source, installedText(p), clip(p.description, 48)])
      ])
    )
    if (directory.marketplace.status === "not-configured") {
      yield* Console.log("marketplace: none set (start the node with CC_MARKETPLACE_URL to list its packages)")
    } else if (directory.marketplace.status === "unreachable") {
      yield* Console.log(`marketplace: ${directory.marketplace.url} did not answer`)
    }
  }))

const describeListing = (listing: Listing) =>
  [
    `package:     ${listing.packageId}`,
    `version:     ${listing.version}`,
    `source:      ${listing.source}${listing.path === null ? "" : ` (${listing.path})`}`,
    `digest:      ${listing.digest}`,
    `installed:   ${installedText(listing)}`,
    `description: ${listing.description}`,
    "facets:",
    ...listing.facets.map((f) => `  ${f.kind} (${f.isolation}) ${f.entry}${f.widgetId === null ? "" : ` widget ${f.widgetId}`}`),
    "permissions:",
    ...(listing.permissions.length === 0
      ? ["  none"]
      : listing.permissions.map((p) => `  ${p.kind} ${p.value}${p.access === null ? "" : ` (${p.access})`}`))
  ].join("\n")

export const show = (options: ShowOptions) =>
  runCommand(Effect.gen(function*() {
    const { api } = yield* connect(options)
    const [listing, response] = yield* api.packages.listing({ path: { packageId: options.packageId }, withResponse: true })
    if (options.json) return yield* printRaw(response)
    yield* Console.log(describeListing(listing))
  }))

export const addLocal = (options: AddLocalOptions) =>
  runCommand(Effect.gen(function*() {
    const { api } = yield* connect(options)
    const [listing, response] = yield* api.packages.addLocal({
      payload: { path: path.resolve(options.folder) },
      withResponse: true
    })
    if (options.json) return yield* printRaw(response)
    yield* Console.log(`listed ${listing.packageId} ${listing.version} (${listing.digest})`)
  }))

/** `@scope/name@1.2.3` → name and version; the first `@` of a scoped name is part of the name. */
export const parseCoordinate = (coordinate: string) => {
  const at = coordinate.lastIndexOf("@")
  return at > 0
    ? { packageId: coordinate.slice(0, at), version: coordinate.slice(at + 1) }
    : { packageId: coordinate, version: undefined }
}

const outcomeLines: Record<Exclude<InstallApproval["status"], "waiting" | "granted">, string> = {
  denied: "the person denied the install",
  expired: "nobody decided within ten minutes; nothing was installed",
  refused: "the install was refused: the package's files changed or cannot be read",
  failed: "the install failed: the node's package cache cannot be written"
}

export const install = (options: InstallOptions) =>
  runCommand(Effect.gen(function*() {
    const { api } = yield* connect(options)
    const { packageId, version } = parseCoordinate(options.coordinate)
    const listing = yield* api.packages.listing({ path: { packageId } })
    const [asked, response] = yield* api.packages.requestInstall({
      payload: {
        packageId,
        ...(version === undefined ? {} : { version }),
        ...(listing.contentDigest === null ? {} : { localDigest: listing.contentDigest })
      },
      withResponse: true
    })
    if (options.json && options.noWait) return yield* printRaw(response)
    const waiting = yield* api.packages.approval({ path: { approvalId: asked.approvalId } })
    yield* Console.error(
      `asked to install ${packageId} ${waiting.version} (approval ${asked.approvalId}); the person decides in the app's inbox until ${waiting.expiresAt}`
    )
    if (options.noWait) return yield* Console.log(asked.approvalId)

    // Across processes there is nothing to subscribe to: ask the node once a second until it is decided.
    const check = api.packages.approval({ path: { approvalId: asked.approvalId } }).pipe(
      Effect.flatMap((approval) =>
        approval.status === "granted"
          ? Effect.map(api.packages.listing({ path: { packageId } }), (now) =>
            now.installed !== null && now.installed.version === approval.version ? Option.some(approval) : Option.none<InstallApproval>())
          : Effect.succeed(approval.status === "waiting" ? Option.none<InstallApproval>() : Option.some(approval))
      )
    )
    const decided: InstallApproval = yield* Effect.gen(function*() {
      for (;;) {
        const found = yield* check
        if (Option.isSome(found)) return found.value
        yield* Effect.sleep(Duration.seconds(1))
      }
    })
    if (options.json) return yield* Console.log(JSON.stringify(decided))
    const status = decided.status
    if (status === "granted" || status === "waiting") return yield* Console.log(`installed ${packageId} ${decided.version}`)
    return yield* new ClientFailure({ code: status.toUpperCase(), message: outcomeLines[status] })
  }))
