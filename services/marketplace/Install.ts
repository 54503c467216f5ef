/** The install coordinate of a release: what the client app and the CLI need to fetch it from the registry. */
import type { InstallCoordinate } from "../../schema/marketplace/Package.js"
import type { Release } from "./PackageStore.js"

export const coordinate = (release: Release): InstallCoordinate => {
  const query = new URLSearchParams({
    package: release.name,
    version: release.version,
    source: "registry",
    integrity: release.integrity
  })
  return {
    package: release.name,
    version: release.version,
    source: "registry",
    integrity: release.integrity,
    openInApp: `app://install?${query.toString()}`,
    // Names and versions are validated (no shell metacharacters), so the command needs no quoting.
    cliCommand: `clark node install ${release.name}@${release.version}`
  }
}
