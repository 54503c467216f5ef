/** The indexer's pure rules: readme sanitising, name similarity, backoff, failure messages. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { analyse, backoff, defaultRetryPolicy, describeFailure, isTransient, repositoryUrlOf, similarNames } from "../../services/marketplace/Indexing.js"
import { renderReadme } from "../../services/marketplace/Readme.js"
import { IntegrityMismatch, RegistryUnavailable, TarballRefused } from "../../services/registry/RegistryErrors.js"
import { packageJsonOf } from "../support/registry/ClarkPackages.js"

describe("renderReadme", () => {
  it.each([
    ["<script>alert(1)</script>hello", "<script", "hello"],
    ["<p onclick=\"x()\">para</p>", "onclick", "para"],
    ["[go](javascript:alert(1))", "javascript:", "go"],
    ["![t](https://tracker.example/p.png)", "tracker.example", ""],
    ["<img src=\"/local.png\" alt=\"pic\">", "<img", ""],
    ["<iframe src=\"https://x.example\"></iframe>after", "<iframe", "after"],
    ["<a href=\"data:text/html,hi\">d</a>", "data:", "d"],
    ["<style>body{}</style>text", "body{}", "text"]
  ])("%s drops %s", (markdown, refused, kept) => {
    const html = renderReadme(markdown) ?? ""
    expect(html).not.toContain(refused)
    expect(html).toContain(kept)
  })

  it("keeps Markdown structure and safe links, marked nofollow", () => {
    const html = renderReadme("# Title\n\n- one\n\n[docs](https://docs.example)\n\n```ts\nconst a = 1\n```")!
    expect(html).toContain("<h1>Title</h1>")
    expect(html).toContain("<li>one</li>")
    expect(html).toContain("<a href=\"https://docs.example\" rel=\"nofollow noopener noreferrer ugc\">docs</a>")
    expect(html).toContain("<code class=\"language-ts\">")
  })

  it("gives null for an empty readme", () => expect(renderReadme("  \n")).toBeNull())
})

describe("similarNames", () => {
  it.each([
    ["lodahs", ["lodash"], []],
    ["lodashh", ["lodash"], ["lodash"]],
    ["react-dom", ["react-dam", "vue"], ["react-dam"]],
    ["notes-keeper", ["notes-keeper"], []],
    ["@evil/express", ["express"], ["express"]],
    ["abc", ["xyz"], []],
    ["weather-now-pro", ["weather-new-pro"], ["weather-new-pro"]]
  ])("%s against %j", (name, existing, similar) => expect(similarNames(name, existing)).toEqual(similar))
})

describe("backoff", () => {
  it.each([[1, 30_000], [2, 60_000], [3, 120_000], [4, 240_000], [5, undefined]])("after attempt %i waits %s ms", (attempts, wait) =>
    expect(backoff(defaultRetryPolicy, attempts)).toBe(wait))
  it("is capped", () => expect(backoff({ maxAttempts: 20, baseMillis: 30_000, capMillis: 60_000 }, 10)).toBe(60_000))
})

describe("failures", () => {
  it("retries only an unreachable registry", () => {
    expect(isTransient(new RegistryUnavailable({ name: "a", stage: "tarball", problem: "timed out" }))).toBe(true)
    expect(isTransient(new IntegrityMismatch({ name: "a", version: "1.0.0", expected: "sha512-x", actual: "sha512-y" }))).toBe(false)
    expect(isTransient(new TarballRefused({ name: "a", version: "1.0.0", reason: "link", path: "package/x" }))).toBe(false)
  })
  it("says what failed without a URL", () => {
    expect(describeFailure(new RegistryUnavailable({ name: "a", stage: "packument", status: 503, problem: "unexpected status" })))
      .toBe("the registry did not answer the packument (status 503): unexpected status")
  })
})

describe("analyse", () => {
  const verified = { version: "1.0.0", integrity: "sha512-abc", signatures: "absent" as const, provenance: "absent" as const }
  const files = new Set(["package.json", "skills/notes.md"])
  const run = (overrides: Record<string, unknown> = {}, fileSet: ReadonlySet<string> = files) =>
    analyse({ packageJson: { ...packageJsonOf({ name: "pkg-a", version: "1.0.0" }), ...overrides }, readme: undefined, files: fileSet, verified, similar: [] })

  it("reports absent signatures and provenance as warnings, never as verified", () => {
    const analysis = Either.getOrThrow(run())
    expect(analysis.version.hasProvenance).toBe(false)
    expect(analysis.version.securityChecks.filter((c) => c.result === "warn").map((c) => c.check)).toEqual(["registry-signature", "provenance"])
    expect(analysis.initialStatus).toBe("listed")
  })
  it("fails a facet whose entry is not in the tarball", () => {
    const analysis = Either.getOrThrow(run({}, new Set(["package.json"])))
    expect(analysis.version.securityChecks.find((c) => c.check === "facet-entries")).toEqual({ check: "facet-entries", result: "fail", details: { missing: ["skills/notes.md"] } })
    expect(analysis.initialStatus).toBe("unreviewed")
  })
  it("refuses a package.json without a clark manifest", () => {
    const result = run({ clark: undefined })
    expect(Either.isLeft(result) && result.left._tag).toBe("ManifestInvalid")
  })
  it.each([
    ["git+https://github.com/a/b.git", "https://github.com/a/b"],
    [{ type: "git", url: "https://git.example/x" }, "https://git.example/x"],
    ["github:a/b", null],
    [undefined, null]
  ])("repository %j is %s", (raw, url) => expect(repositoryUrlOf(raw)).toBe(url))
})
