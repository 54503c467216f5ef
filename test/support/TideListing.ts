/**
 * The example tide widget (examples/packages/tide-widget) as a marketplace lists it: the import document the
 * install tests start a marketplace with, pointing at the tarball a registry stand-in serves.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../examples/packages")
export const tideName = "@clark-examples/tide-widget"
export const tideManifest = JSON.parse(fs.readFileSync(path.join(examples, "tide-widget/package.json"), "utf8")).clark

/** A catalogue listing version 1.0.0 at `integrity`, showing `permissions` as its reach (the manifest's unless given). */
export const tideCatalogue = (integrity: string, permissions: ReadonlyArray<unknown> = tideManifest.permissions) => ({
  packages: [{
    name: tideName,
    displayName: "Tide widget",
    description: "A tide table widget",
    curationStatus: "listed",
    updatedAt: "2026-11-01T00:00:00.000Z",
    versions: [{
      version: "1.0.0",
      publishedAt: "2026-11-01T00:00:00.000Z",
      indexedAt: "2026-11-01T00:05:00.000Z",
      registryIntegrity: integrity,
      tarballSha512Verified: true,
      facets: tideManifest.facets,
      permissions
    }]
  }]
})
