/** The demo catalogue's fixed tables: publishers and the kinds of package, with what each kind declares. */

// ---------------------------------------------------------------------------
// Publishers
// ---------------------------------------------------------------------------

export interface PublisherSpec {
  readonly slug: string
  readonly name: string
  readonly verified: boolean
  /** npm scope the publisher releases under, if any; unscoped publishers use bare names. */
  readonly scope?: string
  readonly domain: string
  readonly github: string
}

export const publishers: ReadonlyArray<PublisherSpec> = [
  { slug: "acme", name: "Acme Labs", verified: true, scope: "acme", domain: "acme-labs.example", github: "acme-labs" },
  { slug: "lumen-works", name: "Lumen Works", verified: true, scope: "lumen", domain: "lumen.example", github: "lumenworks" },
  { slug: "fjord-software", name: "Fjord Software", verified: true, scope: "fjord", domain: "fjord.example", github: "fjord-software" },
  { slug: "open-maps-collective", name: "Open Maps Collective", verified: true, domain: "openmaps.example", github: "open-maps" },
  { slug: "paper-kite", name: "Paper Kite", verified: false, scope: "paperkite", domain: "paperkite.example", github: "paper-kite" },
  { slug: "ledgerly", name: "Ledgerly", verified: true, scope: "ledgerly", domain: "ledgerly.example", github: "ledgerly" },
  { slug: "hearth-home", name: "Hearth Home", verified: false, domain: "hearth.example", github: "hearth-home" },
  { slug: "quill-and-co", name: "Quill & Co", verified: true, domain: "quill.example", github: "quill-and-co" },
  { slug: "marginalia-lab", name: "Marginalia Lab", verified: false, scope: "marginalia", domain: "marginalia.example", github: "marginalia-lab" },
  { slug: "tessellate", name: "Tessellate Studio", verified: false, domain: "tessellate.example", github: "tessellate-studio" },
  { slug: "sam-okafor", name: "Sam Okafor", verified: false, domain: "samokafor.example", github: "samokafor" },
  { slug: "riverbank-audio", name: "Riverbank Audio", verified: false, scope: "riverbank", domain: "riverbank.example", github: "riverbank-audio" },
  { slug: "signal-post", name: "Signal Post", verified: true, domain: "signalpost.example", github: "signal-post" }
]

export const publisherBySlug = new Map(publishers.map((p) => [p.slug, p]))

// ---------------------------------------------------------------------------
// Kinds: how a package of each kind is named, described, isolated and shipped
// ---------------------------------------------------------------------------

export type Kind = "tool" | "widget" | "theme" | "skill" | "service"

export interface KindSpec {
  /** `[name suffix, display suffix]`; the first one is used when a topic pins its kind. */
  readonly suffixes: ReadonlyArray<readonly [string, string]>
  readonly describe: ReadonlyArray<(object: string) => string>
  readonly isolations: ReadonlyArray<string>
  readonly renderer: string | null
  readonly entry: string
  readonly platforms: ReadonlyArray<ReadonlyArray<string>>
}

export const allPlatforms = ["darwin", "linux", "win32", "web", "ios", "android"]

export const kindSpecs: Record<Kind, KindSpec> = {
  widget: {
    suffixes: [["widget", "Widget"], ["widget", "Widget"], ["panel", "Panel"], ["board", "Board"]],
    describe: [
      (o) => `Shows ${o} in a compact dashboard widget`,
      (o) => `Keeps ${o} one glance away in a floating panel`,
      (o) => `Displays ${o} on your home screen`,
      (o) => `Puts ${o} in the sidebar`
    ],
    // Mostly sandboxed; a few widgets need native access for system integration.
    isolations: ["isolated-ui", "isolated-ui", "isolated-ui", "trusted-native"],
    renderer: "html",
    entry: "dist/widget.html",
    platforms: [["darwin", "linux", "win32", "web"], ["web"], ["web", "ios", "android"], ["darwin", "win32"], allPlatforms]
  },
  tool: {
    suffixes: [["cli", "CLI"], ["kit", "Kit"], ["tools", "Tools"]],
    describe: [
      (o) => `Manages ${o} from the command line`,
      (o) => `Imports, tidies and exports ${o}`,
      (o) => `Automates ${o} through a handful of scriptable commands`,
      (o) => `Brings ${o} to the terminal`
    ],
    isolations: ["trusted-native", "trusted-native", "service"],
    renderer: null,
    entry: "dist/cli.js",
    platforms: [["darwin", "linux", "win32"], ["darwin", "linux"], ["linux"]]
  },
  service: {
    suffixes: [["sync", "Sync"], ["bridge", "Bridge"], ["service", "Service"]],
    describe: [
      (o) => `Syncs ${o} across your devices in the background`,
      (o) => `Runs a local service that keeps ${o} up to date`,
      (o) => `Bridges ${o} to your other apps through a local API`
    ],
    isolations: ["service"],
    renderer: null,
    entry: "dist/service.js",
    platforms: [["darwin", "linux", "win32"], ["linux"], ["darwin", "linux"]]
  },
  skill: {
    suffixes: [["skill", "Skill"], ["assistant", "Assistant"]],
    describe: [
      (o) => `Teaches the assistant to summarise ${o}`,
      (o) => `Lets the assistant answer questions about ${o}`,
      (o) => `Helps the assistant draft and organise ${o}`
    ],
    isolations: ["declarative"],
    renderer: null,
    entry: "skill.md",
    platforms: [allPlatforms, ["web"], ["darwin", "linux", "win32", "web"]]
  },
  theme: {
    suffixes: [["theme", "Theme"]],
    describe: [
      (o) => `Colour theme with ${o}`,
      (o) => `A theme built around ${o}`,
      (o) => `Light and dark variants of ${o}`
    ],
    isolations: ["declarative"],
    renderer: null,
    entry: "theme.json",
    platforms: [allPlatforms, ["darwin", "linux", "win32", "web"]]
  }
}

