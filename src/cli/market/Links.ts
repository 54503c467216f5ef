/**
 * `clark market devices …` and `clark market grants …`: the devices linked to the credential's account and
 * the OAuth grants it gave to applications (account:read to list, account:write to revoke). Revoking removes
 * the link or the grant at once: the device or application must be linked or authorised again.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import type { DeviceLink, OAuthGrant } from "../../../schema/marketplace/AccountCredentials.js"
import { clip, table } from "../Output.js"
import { connectionOptions } from "./Settings.js"
import { request } from "./Shared.js"

// Labels and client ids are chosen by whoever linked: clipped to one line without control characters.
const renderDevices = (items: ReadonlyArray<DeviceLink>) =>
  items.length === 0 ? "no linked devices" : table([
    ["ID", "LABEL", "LINKED"],
    ...items.map((device) => [device.id, clip(device.label, 60), device.createdAt])
  ])

const renderGrants = (items: ReadonlyArray<OAuthGrant>) =>
  items.length === 0 ? "no OAuth grants" : table([
    ["ID", "CLIENT", "SCOPES", "GRANTED"],
    ...items.map((grant) => [grant.id, clip(grant.clientId, 60), grant.scopes.join(","), grant.createdAt])
  ])

const idArg = (what: string) => Args.text({ name: "ID" }).pipe(Args.withDescription(what))

const devicesList = Command.make("list", connectionOptions, (options) =>
  request(options, (api) => api.credentials.devices({ withResponse: true }), (result) => renderDevices(result.items))).pipe(
    Command.withDescription("List the devices linked to your account")
  )

const devicesRevoke = Command.make("revoke", {
  ...connectionOptions,
  id: idArg("the device link's id (from `devices list`)")
}, (options) =>
  request(
    options,
    (api) => api.credentials.revokeDevice({ path: { id: options.id }, withResponse: true }),
    (revoked) => `revoked device ${revoked.id}`
  )).pipe(Command.withDescription("Unlink a device from your account at once"))

export const devices = Command.make("devices").pipe(
  Command.withDescription("Devices linked to your account (account:read, account:write)"),
  Command.withSubcommands([devicesList, devicesRevoke])
)

const grantsList = Command.make("list", connectionOptions, (options) =>
  request(options, (api) => api.credentials.grants({ withResponse: true }), (result) => renderGrants(result.items))).pipe(
    Command.withDescription("List the OAuth grants you gave to applications")
  )

const grantsRevoke = Command.make("revoke", {
  ...connectionOptions,
  id: idArg("the grant's id (from `grants list`)")
}, (options) =>
  request(
    options,
    (api) => api.credentials.revokeGrant({ path: { id: options.id }, withResponse: true }),
    (revoked) => `revoked grant ${revoked.id}; its access tokens no longer work`
  )).pipe(Command.withDescription("Revoke an OAuth grant and its access tokens at once"))

export const grants = Command.make("grants").pipe(
  Command.withDescription("OAuth grants you gave to applications (account:read, account:write)"),
  Command.withSubcommands([grantsList, grantsRevoke])
)
