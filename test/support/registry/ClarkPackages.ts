/** Clark packages packed as npm would pack them, for the registry stand-in. */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { packFolder } from "./Tarballs.js"

export interface ClarkPackage {
  readonly name: string
  readonly version: string
  readonly description?: string
  readonly readme?: string
  readonly scripts?: Record<string, string>
  readonly permissions?: ReadonlyArray<{ readonly kind: string; readonly value: string; readonly access: string | null }>
  readonly platforms?: ReadonlyArray<string>
  /** Fields merged over the `package.json` (a test breaking the manifest). */
  readonly packageJson?: Record<string, unknown>
}

/** A declarative skill package: one skill file shown by one skill facet. */
export const packageJsonOf = (pkg: ClarkPackage) => ({
  name: pkg.name,
  version: pkg.version,
  description: pkg.description ?? `The ${pkg.name} skill`,
  keywords: ["notes", "indexer-test"],
  license: "MIT",
  homepage: "https://example.test/home",
  repository: { type: "git", url: "git+https://git.example.test/notes.git" },
  ...(pkg.scripts === undefined ? {} : { scripts: pkg.scripts }),
  clark: {
    manifestVersion: 1,
    displayName: `Display ${pkg.name}`,
    facets: [{ kind: "skill", isolation: "declarative", renderer: null, entry: "skills/notes.md", widgetId: null }],
    permissions: pkg.permissions ?? [],
    skills: [{ id: "notes", name: "Notes", file: "skills/notes.md" }],
    platforms: pkg.platforms ?? ["macos", "linux"],
    previews: [
      { kind: "image", url: "https://cdn.example.test/shot.png", alt: "A shot", contentType: "image/png", width: 800, height: 600 },
      { kind: "image", url: "http://insecure.example.test/shot.png", alt: "refused", contentType: "image/png", width: null, height: null }
    ]
  },
  ...pkg.packageJson
})

export const packClark = async (pkg: ClarkPackage): Promise<Buffer> => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "clark-pkg-"))
  try {
    fs.writeFileSync(path.join(folder, "package.json"), JSON.stringify(packageJsonOf(pkg)))
    fs.mkdirSync(path.join(folder, "skills"))
    fs.writeFileSync(path.join(folder, "skills", "notes.md"), "# Notes\nTake notes.\n")
    if (pkg.readme !== undefined) fs.writeFileSync(path.join(folder, "README.md"), pkg.readme)
    return await packFolder(folder)
  } finally {
    fs.rmSync(folder, { recursive: true, force: true })
  }
}
