/** Decoding an import document: unknown fields and invalid values are refused with the path that names them. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { decodeDocument } from "../../../src/marketplace/admin/Admin.js"
import { demoCatalog } from "../../../src/marketplace/seed/Demo.js"

const version = (extra: object = {}) => ({
  version: "1.0.0",
  publishedAt: "2024-01-01T00:00:00Z",
  indexedAt: "2024-01-01T00:00:00Z",
  registryIntegrity: "sha512-x",
  ...extra
})
const pkg = (extra: object = {}) => ({ name: "a", displayName: "A", ...extra })

/** The refusal's path and message, or the decoded document. */
const refusal = (input: unknown) =>
  Either.match(decodeDocument(input), {
    onLeft: (error) => ({ tag: error._tag, path: error.path, message: error.message }),
    onRight: (document) => ({ accepted: document })
  })

const versionMessage = "must be three dot-separated integers with an optional hyphenated prerelease suffix"
const dateMessage = "must be an ISO-8601 date-time"

describe("decodeDocument", () => {
  it.each<{ label: string; input: unknown; path: string; message: string | RegExp }>([
    { label: "an unknown package field", input: { packages: [pkg({ colour: "red" })] }, path: "packages[0].colour", message: /^is unexpected/ },
    { label: "an unknown top-level field", input: { extras: [] }, path: "extras", message: /^is unexpected/ },
    {
      label: "an unknown collection item field",
      input: { collections: [{ slug: "c", title: "C", items: [{ packageName: "a", colour: 1 }] }] },
      path: "collections[0].items[0].colour",
      message: /^is unexpected/
    },
    {
      label: "an unknown version field",
      input: { packages: [pkg({ versions: [version({ size: 1 })] })] },
      path: "packages[0].versions[0].size",
      message: /^is unexpected/
    },
    {
      label: "a curation status that does not exist",
      input: { packages: [pkg(), pkg({ name: "b", curationStatus: "approved" })] },
      path: "packages[1].curationStatus",
      message: /"approved"/
    },
    {
      label: "a date that is not a date",
      input: { packages: [pkg({ versions: [version({ publishedAt: "yesterday" })] })] },
      path: "packages[0].versions[0].publishedAt",
      message: dateMessage
    },
    {
      label: "a date without a time",
      input: { packages: [pkg({ versions: [version({ indexedAt: "2024-01-01" })] })] },
      path: "packages[0].versions[0].indexedAt",
      message: dateMessage
    },
    {
      label: "a day that does not exist",
      input: { packages: [pkg({ versions: [version({ publishedAt: "2024-02-30T00:00:00Z" })] })] },
      path: "packages[0].versions[0].publishedAt",
      message: dateMessage
    },
    {
      label: "a bad package updatedAt",
      input: { packages: [pkg({ updatedAt: "2024-13-01T00:00:00Z" })] },
      path: "packages[0].updatedAt",
      message: dateMessage
    },
    {
      label: "a version that is not three numbers",
      input: { packages: [pkg({ versions: [version(), version({ version: "1.0" })] })] },
      path: "packages[0].versions[1].version",
      message: versionMessage
    },
    { label: "a bad latestVersion", input: { packages: [pkg({ latestVersion: "v1" })] }, path: "packages[0].latestVersion", message: versionMessage },
    { label: "a bad package name", input: { packages: [pkg({ name: "Bad Name" })] }, path: "packages[0].name", message: /registry package name/ },
    { label: "a bad category slug", input: { categories: [{ slug: "Bad Slug", name: "X" }] }, path: "categories[0].slug", message: /lowercase/ },
    {
      label: "a page without revisions",
      input: { pages: [{ slug: "about", kind: "custom", title: "About", revisions: [] }] },
      path: "pages[0].revisions",
      message: /.+/
    },
    {
      label: "the first of several faults",
      input: { packages: [pkg({ colour: 1 }), pkg({ name: "b" }), pkg({ name: "c", curationStatus: "approved" })] },
      path: "packages[0].colour",
      message: /^is unexpected/
    },
    { label: "a document that is not an object", input: [], path: "(document)", message: /.+/ }
  ])("refuses $label at $path", ({ input, message, path }) => {
    const result = refusal(input)
    expect(result).toEqual({ tag: "ImportRejected", path, message: expect.stringMatching(message) })
  })

  it("accepts the demo catalogue", () => {
    const result = decodeDocument(demoCatalog(new Date("2026-01-01T00:00:00Z")))
    expect(Either.isRight(result)).toBe(true)
    const document = Either.getOrThrow(result)
    expect(document.packages.length).toBeGreaterThanOrEqual(150)
    expect(document.packages.every((p) => p.versions.length > 0)).toBe(true)
  })

  it("fills defaults and stores instants in canonical UTC", () => {
    expect(refusal({ packages: [pkg({ versions: [version({ publishedAt: "2024-01-01T02:00:00+02:00" })] })] })).toEqual({
      accepted: {
        categories: [],
        publishers: [],
        collections: [],
        pages: [],
        packages: [{
          name: "a",
          displayName: "A",
          description: "",
          publisher: null,
          categorySlug: null,
          curationStatus: "unreviewed",
          keywords: [],
          homepage: null,
          repositoryUrl: null,
          license: null,
          versions: [{
            version: "1.0.0",
            publishedAt: "2024-01-01T00:00:00.000Z",
            indexedAt: "2024-01-01T00:00:00.000Z",
            registryIntegrity: "sha512-x",
            tarballSha512Verified: false,
            hasProvenance: false,
            readmeHtml: null,
            platforms: [],
            facets: [],
            permissions: [],
            previews: [],
            securityChecks: []
          }]
        }]
      }
    })
  })
})
