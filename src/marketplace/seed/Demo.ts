/**
 * The demo catalogue: a realistic-looking marketplace (about 160 packages, publishers,
 * collections and pages) in the import format of `clark marketplace admin import`.
 *
 * Pure and deterministic: the text comes from the tables below and every random choice
 * from a seeded PRNG, so `demoCatalog(now)` always returns the same catalogue, with all
 * dates placed before `now`.
 */
import type { ImportDocumentInput, ImportPage } from "../../../schema/marketplace/Import.js"
import type { Block, PageDocument } from "../../../schema/marketplace/Page.js"
import {
  fakeIntegrity,
  type ImportCategoryInput,
  type ImportPackageInput,
  type ImportPublisherInput,
  type ImportVersionInput,
  mixSeed,
  mulberry32,
  type Rng
} from "./Synthetic.js"

type CurationStatus = NonNullable<ImportPackageInput["curationStatus"]>
type FacetInput = NonNullable<ImportVersionInput["facets"]>[number]
type PermissionInput = NonNullable<ImportVersionInput["permissions"]>[number]
type PreviewInput = NonNullable<ImportVersionInput["previews"]>[number]
type SecurityCheckInput = NonNullable<ImportVersionInput["securityChecks"]>[number]
type CollectionInput = NonNullable<ImportDocumentInput["collections"]>[number]
type PageInput = typeof ImportPage.Encoded
type PageDocumentInput = typeof PageDocument.Encoded

const demoSeed = 20261101

// ---------------------------------------------------------------------------
// Publishers
// ---------------------------------------------------------------------------

interface PublisherSpec {
  readonly slug: string
  readonly name: string
  readonly verified: boolean
  /** npm scope the publisher releases under, if any; unscoped publishers use bare names. */
  readonly scope?: string
  readonly domain: string
  readonly github: string
}

const publishers: ReadonlyArray<PublisherSpec> = [
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

const publisherBySlug = new Map(publishers.map((p) => [p.slug, p]))

// ---------------------------------------------------------------------------
// Kinds: how a package of each kind is named, described, isolated and shipped
// ---------------------------------------------------------------------------

type Kind = "tool" | "widget" | "theme" | "skill" | "service"

interface KindSpec {
  /** `[name suffix, display suffix]`; the first one is used when a topic pins its kind. */
  readonly suffixes: ReadonlyArray<readonly [string, string]>
  readonly describe: ReadonlyArray<(object: string) => string>
  readonly isolations: ReadonlyArray<string>
  readonly renderer: string | null
  readonly entry: string
  readonly platforms: ReadonlyArray<ReadonlyArray<string>>
}

const allPlatforms = ["darwin", "linux", "win32", "web", "ios", "android"]

const kindSpecs: Record<Kind, KindSpec> = {
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

// ---------------------------------------------------------------------------
// Categories and their topics
// ---------------------------------------------------------------------------

interface Topic {
  /** Name stem, e.g. `calendar` gives `calendar-widget`. Unique across the catalogue. */
  readonly word: string
  readonly label: string
  /** The noun phrase the description is about, e.g. "your calendar events". */
  readonly object: string
  readonly kind?: Kind
  readonly publisher?: string
}

interface CategorySpec {
  readonly slug: string
  readonly name: string
  readonly description: string
  /** Kinds to draw from; repeated entries weigh more. */
  readonly kinds: ReadonlyArray<Kind>
  readonly publishers: ReadonlyArray<string>
  readonly hosts: ReadonlyArray<string>
  readonly keywords: ReadonlyArray<string>
  /** Endings for the description sentence, e.g. "without sending data to the cloud". */
  readonly benefits: ReadonlyArray<string>
  readonly topics: ReadonlyArray<Topic>
}

const t = (word: string, label: string, object: string, pin: Pick<Topic, "kind" | "publisher"> = {}): Topic => ({
  word,
  label,
  object,
  ...pin
})

const genericBenefits = [
  "without sending data to the cloud",
  "with keyboard shortcuts for everything",
  "and works fully offline",
  "with a clean, accessible layout",
  "and stays out of your way until you need it"
]

// Search words ("calendar", "markdown", "weather", "invoice", "map") are deliberately
// spread over a handful of topics each, so full-text search has something to rank.
const categories: ReadonlyArray<CategorySpec> = [
  {
    slug: "productivity",
    name: "Productivity",
    description: "Plan the day, track tasks and keep focus.",
    kinds: ["widget", "widget", "widget", "tool", "skill", "service"],
    publishers: ["acme", "lumen-works", "sam-okafor", "paper-kite"],
    hosts: ["api.tasks.example.com", "caldav.example.com"],
    keywords: ["productivity", "planning", "focus", "tasks"],
    benefits: ["with gentle reminders that respect focus time", "with drag-and-drop reordering"],
    topics: [
      t("calendar", "Calendar", "your calendar events"),
      t("agenda", "Agenda", "today's agenda from every calendar"),
      t("notes", "Notes", "notes and quick thoughts in plain markdown", { kind: "widget", publisher: "acme" }),
      t("todo", "Todo", "your to-do lists"),
      t("pomodoro", "Pomodoro", "focused pomodoro sessions"),
      t("habit-tracker", "Habit Tracker", "daily habits and streaks"),
      t("kanban", "Kanban", "kanban boards for small teams"),
      t("clipboard", "Clipboard", "your clipboard history"),
      t("bookmarks", "Bookmarks", "saved bookmarks and reading lists"),
      t("time-tracker", "Time Tracker", "billable hours ready to invoice"),
      t("focus-mode", "Focus Mode", "distraction-free focus sessions"),
      t("reminders", "Reminders", "recurring reminders"),
      t("weekly-review", "Weekly Review", "a guided weekly review"),
      t("world-clock", "World Clock", "the time across your team's time zones"),
      t("forecast", "Forecast", "the local weather forecast", { kind: "widget" }),
      t("snippets", "Snippets", "reusable text snippets")
    ]
  },
  {
    slug: "developer-tools",
    name: "Developer tools",
    description: "Inspect, lint, test and ship code.",
    kinds: ["tool", "tool", "tool", "service", "widget", "skill"],
    publishers: ["fjord-software", "tessellate", "sam-okafor", "acme"],
    hosts: ["api.github.com", "registry.npmjs.org", "hooks.ci.example.com"],
    keywords: ["developer", "cli", "devops", "debugging"],
    benefits: ["with sensible defaults for monorepos", "with output that pipes cleanly into other tools"],
    topics: [
      t("git-status", "Git Status", "the status of your git repositories"),
      t("json-inspector", "JSON Inspector", "large JSON payloads"),
      t("api-client", "API Client", "HTTP requests and saved API collections"),
      t("log-tail", "Log Tail", "live application logs"),
      t("docs-lint", "Docs Lint", "markdown documentation and its broken links", { kind: "tool" }),
      t("regex-lab", "Regex Lab", "regular expressions with live matches", { kind: "widget" }),
      t("container-dashboard", "Container Dashboard", "running containers and their resource use"),
      t("env-manager", "Env Manager", "environment variables for local projects"),
      t("ci-monitor", "CI Monitor", "the state of your CI pipelines", { kind: "widget" }),
      t("schema-diff", "Schema Diff", "database schema changes between branches"),
      t("port-watch", "Port Watch", "listening ports and the processes behind them"),
      t("scratchpad", "Scratchpad", "throwaway code experiments"),
      t("dependency-audit", "Dependency Audit", "outdated and vulnerable dependencies"),
      t("commit-message", "Commit Message", "commit messages that follow your team's conventions", { kind: "skill" }),
      t("feature-flags", "Feature Flags", "feature flags across environments"),
      t("uptime", "Uptime", "uptime checks for your side projects", { kind: "service" })
    ]
  },
  {
    slug: "maps-and-places",
    name: "Maps and places",
    description: "Maps, routes, places and the weather on the way.",
    kinds: ["widget", "widget", "service", "tool"],
    publishers: ["open-maps-collective", "fjord-software", "paper-kite"],
    hosts: ["tiles.openmaps.example", "api.weather.example.com", "geocode.openmaps.example"],
    keywords: ["maps", "places", "navigation", "outdoors", "travel"],
    benefits: ["with tiles cached for when you lose signal", "with routes you can share as a link"],
    topics: [
      t("offline-maps", "Offline Maps", "offline map tiles for whole regions"),
      t("weather-radar", "Weather Radar", "live weather radar over the map", { kind: "widget" }),
      t("transit", "Transit", "nearby transit departures on a map"),
      t("saved-places", "Saved Places", "your saved places and favourite spots"),
      t("geocoder", "Geocoder", "addresses and map coordinates", { kind: "tool" }),
      t("hiking-trails", "Hiking Trails", "hiking routes on a topographic map"),
      t("trail-conditions", "Trail Conditions", "trail conditions and mountain weather"),
      t("city-guide", "City Guide", "walking tours and city highlights"),
      t("bike-routes", "Bike Routes", "quiet bike routes"),
      t("parking", "Parking", "free parking spaces near your destination"),
      t("ev-chargers", "EV Chargers", "electric vehicle chargers along your route"),
      t("travel-journal", "Travel Journal", "trips, photos and the places you visited"),
      t("timezone-map", "Timezone Map", "time zones on an interactive map"),
      t("gpx", "GPX", "GPX tracks and waypoints"),
      t("flight-tracker", "Flight Tracker", "the flights in the air above you"),
      t("coffee-finder", "Coffee Finder", "independent coffee shops nearby")
    ]
  },
  {
    slug: "media",
    name: "Media",
    description: "Music, podcasts, photos and video.",
    kinds: ["widget", "widget", "tool", "service"],
    publishers: ["riverbank-audio", "lumen-works", "tessellate"],
    hosts: ["api.podcasts.example.com", "cdn.media.example.com"],
    keywords: ["media", "audio", "video", "photos"],
    benefits: ["with hardware-accelerated playback", "and keeps your library in sync"],
    topics: [
      t("podcast", "Podcast", "your podcast queue"),
      t("now-playing", "Now Playing", "the track that is playing right now"),
      t("photo-frame", "Photo Frame", "a rotating selection of your photos", { kind: "widget" }),
      t("screen-recorder", "Screen Recorder", "screen recordings with a webcam overlay"),
      t("image-optimizer", "Image Optimizer", "large images before you share them"),
      t("subtitles", "Subtitles", "subtitles for your videos"),
      t("radio", "Radio", "internet radio stations"),
      t("playlist", "Playlist", "shared playlists"),
      t("gif-maker", "GIF Maker", "short clips turned into GIFs"),
      t("video-trimmer", "Video Trimmer", "long videos trimmed to the good part"),
      t("audiobook", "Audiobook", "audiobooks with chapter bookmarks"),
      t("color-picker", "Color Picker", "colours sampled from anywhere on screen", { kind: "widget" }),
      t("album-art", "Album Art", "album art and track metadata"),
      t("voice-memos", "Voice Memos", "voice memos with searchable transcripts"),
      t("webcam-effects", "Webcam Effects", "webcam backgrounds and lighting", { kind: "service" }),
      t("livestream", "Livestream", "livestream chat and alerts")
    ]
  },
  {
    slug: "writing",
    name: "Writing",
    description: "Draft, edit and publish words.",
    kinds: ["tool", "widget", "widget", "skill"],
    publishers: ["quill-and-co", "paper-kite", "marginalia-lab"],
    hosts: ["api.dictionary.example.com", "publish.blog.example.com"],
    keywords: ["writing", "editor", "words", "prose"],
    benefits: ["with typography that is easy on the eyes", "with version history for every draft"],
    topics: [
      t("markdown-editor", "Markdown Editor", "markdown documents with a live preview", { kind: "widget" }),
      t("word-count", "Word Count", "daily word counts and writing goals", { kind: "widget" }),
      t("grammar", "Grammar", "grammar and style suggestions"),
      t("thesaurus", "Thesaurus", "synonyms without leaving your draft"),
      t("outline", "Outline", "long documents as collapsible outlines"),
      t("journal", "Journal", "a private daily journal"),
      t("screenplay", "Screenplay", "screenplays in industry-standard format"),
      t("blog-publisher", "Blog Publisher", "blog posts written in markdown", { kind: "tool" }),
      t("translation", "Translation", "paragraphs translated into forty languages"),
      t("citation", "Citation", "citations and bibliographies"),
      t("typewriter", "Typewriter", "a distraction-free typewriter mode", { kind: "widget" }),
      t("readability", "Readability", "readability scores for every paragraph"),
      t("newsletter", "Newsletter", "newsletter drafts and send schedules"),
      t("story-bible", "Story Bible", "characters, places and timelines for your novel"),
      t("proofread", "Proofread", "final proofreading passes", { kind: "skill" }),
      t("haiku", "Haiku", "syllable counts for short poems")
    ]
  },
  {
    slug: "finance",
    name: "Finance",
    description: "Budgets, invoices and the numbers behind them.",
    kinds: ["widget", "widget", "tool", "service"],
    publishers: ["ledgerly", "acme", "sam-okafor"],
    hosts: ["api.ledgerly.example", "rates.exchange.example.com"],
    keywords: ["finance", "money", "accounting", "budgeting"],
    benefits: ["with bank-grade encryption at rest", "with exports your accountant will accept"],
    topics: [
      t("invoice", "Invoice", "every invoice you send, numbered automatically,", { kind: "tool", publisher: "ledgerly" }),
      t("receipts", "Receipts", "receipts matched to invoice lines"),
      t("budget", "Budget", "monthly budgets by envelope", { kind: "widget" }),
      t("expense-splitter", "Expense Splitter", "shared expenses between friends", { kind: "widget" }),
      t("stock-ticker", "Stock Ticker", "stock prices and your watchlist"),
      t("crypto-portfolio", "Crypto Portfolio", "crypto holdings across wallets"),
      t("bill-reminders", "Bill Reminders", "upcoming bills on a calendar"),
      t("tax-estimator", "Tax Estimator", "quarterly tax estimates from your invoice history"),
      t("currency", "Currency", "live exchange rates"),
      t("subscriptions", "Subscriptions", "recurring subscriptions you forgot about"),
      t("net-worth", "Net Worth", "your net worth over time"),
      t("bank-feeds", "Bank Feeds", "bank transactions", { kind: "service" }),
      t("payroll", "Payroll", "payroll runs for small teams"),
      t("savings-goals", "Savings Goals", "savings goals and progress"),
      t("mileage", "Mileage", "business mileage for tax returns"),
      t("price-alerts", "Price Alerts", "price drops on products you are watching")
    ]
  },
  {
    slug: "home-automation",
    name: "Home automation",
    description: "Lights, sensors, energy and routines.",
    kinds: ["service", "service", "widget", "widget", "tool"],
    publishers: ["hearth-home", "fjord-software", "tessellate"],
    hosts: ["hub.local", "api.hearth.example"],
    keywords: ["smart-home", "automation", "iot", "sensors"],
    benefits: ["over your local network only", "with scenes you can trigger by voice"],
    topics: [
      t("thermostat", "Thermostat", "thermostat schedules"),
      t("lights", "Lights", "lights and scenes in every room"),
      t("energy-monitor", "Energy Monitor", "household energy use"),
      t("solar", "Solar", "solar panel output and battery charge"),
      t("weather-station", "Weather Station", "readings from your home weather station"),
      t("door-sensors", "Door Sensors", "door and window sensors"),
      t("plant-care", "Plant Care", "soil moisture and watering schedules"),
      t("bin-day", "Bin Day", "the waste collection calendar"),
      t("doorbell", "Doorbell", "doorbell camera snapshots"),
      t("air-quality", "Air Quality", "indoor air quality readings"),
      t("robot-vacuum", "Robot Vacuum", "robot vacuum cleaning runs"),
      t("garage", "Garage", "the garage door", { kind: "service" }),
      t("presence", "Presence", "who is home"),
      t("sprinklers", "Sprinklers", "garden sprinkler zones"),
      t("home-scenes", "Home Scenes", "morning and evening routines"),
      t("ups-monitor", "UPS Monitor", "power outages and UPS battery status")
    ]
  },
  {
    slug: "research",
    name: "Research",
    description: "Read papers, keep notes and analyse data.",
    kinds: ["skill", "skill", "tool", "widget"],
    publishers: ["marginalia-lab", "quill-and-co", "sam-okafor"],
    hosts: ["export.arxiv.org", "api.crossref.org"],
    keywords: ["research", "academic", "science", "papers"],
    benefits: ["with references in any citation style", "with every claim linked to its source"],
    topics: [
      t("paper-notes", "Paper Notes", "reading notes in markdown for academic papers"),
      t("arxiv-feed", "arXiv Feed", "new arXiv papers in your field"),
      t("citation-graph", "Citation Graph", "citation graphs between papers"),
      t("dataset-browser", "Dataset Browser", "large CSV and Parquet datasets", { kind: "widget" }),
      t("conference-deadlines", "Conference Deadlines", "conference deadlines as a calendar feed"),
      t("lab-notebook", "Lab Notebook", "experiments and lab results"),
      t("literature-review", "Literature Review", "a structured literature review", { kind: "skill" }),
      t("survey-analysis", "Survey Analysis", "survey responses"),
      t("interview-coding", "Interview Coding", "qualitative interview transcripts"),
      t("patent-search", "Patent Search", "prior art and patent filings"),
      t("statistics", "Statistics", "quick statistical tests"),
      t("flashcards", "Flashcards", "spaced-repetition flashcards"),
      t("wiki-lookup", "Wiki Lookup", "encyclopedia entries for any selected term"),
      t("pdf-annotator", "PDF Annotator", "highlights and comments on PDFs"),
      t("reading-queue", "Reading Queue", "the papers you plan to read"),
      t("unit-converter", "Unit Converter", "units and physical constants", { kind: "tool" })
    ]
  },
  {
    slug: "communication",
    name: "Communication",
    description: "Chat, email, meetings and the team in between.",
    kinds: ["service", "widget", "widget", "skill"],
    publishers: ["signal-post", "acme", "lumen-works"],
    hosts: ["api.chat.example.com", "imap.mail.example.com", "meet.example.com"],
    keywords: ["communication", "team", "messaging", "email"],
    benefits: ["with end-to-end encryption", "across every workspace you belong to"],
    topics: [
      t("team-chat", "Team Chat", "team chat channels", { kind: "service" }),
      t("meeting-scheduler", "Meeting Scheduler", "meeting invites and shared calendar slots"),
      t("inbox-zero", "Inbox Zero", "your email inbox"),
      t("standup", "Standup", "asynchronous daily standups"),
      t("availability", "Availability", "your availability status across chat apps"),
      t("video-call", "Video Call", "video calls with noise suppression"),
      t("transcriber", "Transcriber", "meeting transcripts and action items"),
      t("email-templates", "Email Templates", "reusable email templates for quotes and invoice reminders"),
      t("announcements", "Announcements", "company announcements"),
      t("polls", "Polls", "quick polls in any channel"),
      t("chat-translator", "Chat Translator", "chat messages in other languages"),
      t("contacts", "Contacts", "your contacts and recent conversations"),
      t("voicemail", "Voicemail", "voicemail transcriptions"),
      t("out-of-office", "Out of Office", "out-of-office replies"),
      t("digest", "Digest", "long email threads as short digests"),
      t("kudos", "Kudos", "thank-you notes for your teammates")
    ]
  },
  {
    slug: "themes",
    name: "Themes",
    description: "Colours and typography for every surface.",
    kinds: ["theme"],
    publishers: ["tessellate", "paper-kite", "lumen-works", "sam-okafor"],
    hosts: [],
    keywords: ["theme", "colors", "appearance"],
    benefits: [
      "for every widget and panel",
      "with matching terminal colours",
      "tuned for long reading sessions",
      "that follows the system light and dark setting"
    ],
    topics: [
      t("nord-frost", "Nord Frost", "a cool arctic palette"),
      t("solarized-dawn", "Solarized Dawn", "warm low-contrast tones"),
      t("midnight-ink", "Midnight Ink", "deep blue-black backgrounds"),
      t("paper-white", "Paper White", "a crisp light palette for daylight"),
      t("serif-reader", "Serif Reader", "a calm serif layout for reading markdown"),
      t("high-contrast", "High Contrast", "maximum legibility for low-vision users"),
      t("forest", "Forest", "mossy greens and bark browns"),
      t("sunset", "Sunset", "soft oranges and violets"),
      t("mono", "Mono", "strict black and white"),
      t("retro-terminal", "Retro Terminal", "phosphor green on black"),
      t("pastel", "Pastel", "gentle pastel accents"),
      t("eclipse", "Eclipse", "a true-black palette for OLED screens"),
      t("ocean", "Ocean", "sea-glass blues"),
      t("espresso", "Espresso", "rich coffee browns"),
      t("sakura", "Sakura", "cherry-blossom pinks"),
      t("graphite", "Graphite", "neutral greys for long sessions")
    ]
  }
]

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

const dayMs = 86_400_000
const minuteMs = 60_000

const isoDaysBefore = (now: Date, days: number): string => new Date(now.getTime() - days * dayMs).toISOString()

/** FNV-1a, so each topic gets its own random stream: adding a topic leaves the others unchanged. */
const hashString = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/**
 * Curation is assigned by position rather than by chance so every status is present
 * whatever the PRNG does: mostly listed, one in ten featured, a few of the others.
 */
const curationFor = (index: number): CurationStatus => {
  if (index % 37 === 19) return "rejected"
  if (index % 31 === 11) return "hidden"
  if (index % 25 === 7) return "unreviewed"
  if (index % 10 === 3) return "featured"
  return "listed"
}

// ---------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------

/** 1-6 semver strings in release order; a major bump is sometimes preceded by a `-beta.1`. */
const versionNumbers = (rng: Rng, count: number): Array<string> => {
  let [major, minor, patch] = rng.chance(0.4) ? [0, 1, 0] : [1, 0, 0]
  const out = [`${major}.${minor}.${patch}`]
  while (out.length < count) {
    const roll = rng.next()
    if (roll < 0.55) {
      patch += 1
    } else if (roll < 0.85) {
      minor += 1
      patch = 0
    } else {
      major += 1
      minor = 0
      patch = 0
      if (rng.chance(0.5)) {
        out.push(`${major}.0.0-beta.1`)
        if (out.length === count) break
      }
    }
    out.push(`${major}.${minor}.${patch}`)
  }
  return out
}

/**
 * Release instants spread over `[firstDaysAgo, 1 day ago]`: slot `v` starts at
 * `v / count` of the span and is jittered by at most half a slot, so dates strictly
 * increase and leave at least two hours between releases for indexing.
 */
const releaseTimes = (rng: Rng, now: Date, count: number, firstDaysAgo: number): Array<number> => {
  const first = now.getTime() - firstDaysAgo * dayMs
  const span = now.getTime() - dayMs - first
  return Array.from({ length: count }, (_, v) => first + Math.floor((span * v) / count + rng.next() * (span / (2 * count))))
}

interface PackageContext {
  readonly rng: Rng
  readonly name: string
  readonly displayName: string
  readonly description: string
  readonly kind: Kind
  readonly category: CategorySpec
  readonly topic: Topic
  readonly status: CurationStatus
  readonly repositoryUrl: string | null
}

const facetsFor = (ctx: PackageContext, widgetId: string): Array<FacetInput> => {
  const spec = kindSpecs[ctx.kind]
  const main: FacetInput = {
    kind: ctx.kind,
    isolation: ctx.rng.pick(spec.isolations),
    renderer: spec.renderer,
    entry: spec.entry,
    widgetId: ctx.kind === "widget" ? widgetId : null
  }
  // Some widgets ship a companion background service that feeds them data.
  if (ctx.kind === "widget" && ctx.rng.chance(0.2)) {
    return [main, { kind: "service", isolation: "service", renderer: null, entry: "dist/service.js", widgetId: null }]
  }
  return [main]
}

const permissionsFor = (ctx: PackageContext): Array<PermissionInput> => {
  const { rng, kind, category } = ctx
  if (kind === "theme") return []
  const out: Array<PermissionInput> = []
  if (kind === "skill") out.push({ kind: "capability", value: "assistant.context", access: "read" })
  if (category.hosts.length > 0 && kind !== "skill" && rng.chance(0.8)) {
    out.push({ kind: "network", value: rng.pick(category.hosts), access: null })
  }
  if (kind === "tool" || category.slug === "writing" || category.slug === "research") {
    out.push(
      rng.chance(0.6)
        ? { kind: "filesystem", value: "read:~/Documents", access: "read" }
        : { kind: "filesystem", value: `write:~/Documents/${ctx.topic.label}`, access: "write" }
    )
  }
  if ((category.slug === "media" || category.slug === "communication") && rng.chance(0.4)) {
    out.push({ kind: "microphone", value: "default-input", access: null })
    if (rng.chance(0.5)) out.push({ kind: "camera", value: "default-camera", access: null })
  }
  if (category.slug === "home-automation" && ctx.topic.word === "doorbell") {
    out.push({ kind: "camera", value: "rtsp://doorbell.local", access: "read" })
  }
  if (kind === "service") out.push({ kind: "lifecycle", value: rng.pick(["autostart", "background"]), access: null })
  if (kind === "widget" && rng.chance(0.3)) out.push({ kind: "capability", value: "notifications", access: null })
  if (rng.chance(0.1)) out.push({ kind: "capability", value: "clipboard", access: "write" })
  return out
}

const previewsFor = (ctx: PackageContext, slug: string): Array<PreviewInput> => {
  const { rng } = ctx
  const base = `https://cdn.clark.example/previews/${slug}`
  const count = ctx.status === "featured" ? rng.int(2, 3) : ctx.kind === "theme" ? rng.int(1, 2) : rng.int(0, 2)
  const out: Array<PreviewInput> = []
  for (let n = 1; n <= count; n++) {
    const roll = rng.next()
    if (n === 1 || roll < 0.5) {
      const webp = rng.chance(0.25)
      out.push({
        kind: "image",
        url: `${base}/screenshot-${n}.${webp ? "webp" : "png"}`,
        alt: `${ctx.displayName} ${n === 1 ? "main view" : "settings"} in a ${rng.pick(["light", "dark"])} theme`,
        contentType: webp ? "image/webp" : "image/png",
        // Some uploads were never measured: the importer must accept unknown sizes.
        width: webp ? null : 1280,
        height: webp ? null : 800
      })
    } else if (roll < 0.8) {
      out.push({
        kind: "video",
        url: `${base}/demo.mp4`,
        alt: `A thirty-second walkthrough of ${ctx.displayName}`,
        contentType: "video/mp4",
        width: 1920,
        height: 1080
      })
    } else {
      out.push({
        kind: "social_card",
        url: `${base}/card.png`,
        alt: `${ctx.displayName}: ${ctx.description}`,
        contentType: "image/png",
        width: 1200,
        height: 630
      })
    }
  }
  return out
}

const securityChecksFor = (ctx: PackageContext, hasProvenance: boolean): Array<SecurityCheckInput> => {
  const { rng, status } = ctx
  const checks: Array<SecurityCheckInput> = [{ check: "integrity", result: "pass", details: { algorithm: "sha512" } }]
  // Unreviewed packages have only been through the automatic integrity check.
  if (status === "unreviewed") return checks
  checks.push(
    hasProvenance
      ? { check: "provenance", result: "pass", details: { builder: "github-actions", sourceRepository: ctx.repositoryUrl } }
      : { check: "provenance", result: "warn", details: { reason: "no provenance attestation published" } }
  )
  checks.push(
    ctx.kind === "tool" && rng.chance(0.3)
      ? { check: "install-scripts", result: "warn", details: { scripts: ["postinstall"], command: "node scripts/fetch-binary.js" } }
      : { check: "install-scripts", result: "pass" }
  )
  if (status === "rejected") {
    checks.push({
      check: "permissions-review",
      result: "fail",
      details: { reviewer: "curation-team", reason: "requests filesystem write access it does not need" }
    })
  } else if (status === "hidden") {
    checks.push({ check: "permissions-review", result: "warn", details: { reviewer: "curation-team", reason: "network host changed in a patch release" } })
  } else {
    checks.push({ check: "permissions-review", result: "pass" })
  }
  return checks
}

const readmeFor = (ctx: PackageContext, version: string, permissions: ReadonlyArray<PermissionInput>): string => {
  const permissionItems = permissions.length === 0
    ? "<li>No special permissions.</li>"
    : permissions.map((p) => `<li><code>${escapeHtml(p.kind)}</code>: ${escapeHtml(p.value)}</li>`).join("")
  return [
    `<h1>${escapeHtml(ctx.displayName)}</h1>`,
    `<p>${escapeHtml(ctx.description)}</p>`,
    `<h2>Install</h2>`,
    `<pre><code>clark install ${escapeHtml(ctx.name)}@${version}</code></pre>`,
    `<h2>Permissions</h2>`,
    `<ul>${permissionItems}</ul>`
  ].join("\n")
}

const versionsFor = (ctx: PackageContext, now: Date, slug: string): Array<ImportVersionInput> => {
  const { rng } = ctx
  // Unreviewed packages are new arrivals: one or two recent releases.
  const count = ctx.status === "unreviewed" ? rng.int(1, 2) : rng.int(1, 6)
  const firstDaysAgo = ctx.status === "unreviewed" ? rng.int(2, 20) : rng.int(60, 1000)
  const numbers = versionNumbers(rng, count)
  const times = releaseTimes(rng, now, count, firstDaysAgo)
  const platforms = [...rng.pick(kindSpecs[ctx.kind].platforms)]
  // Widget ids are the bare package name: stable across scopes and readable in layouts.
  const widgetId = ctx.name.replace(/^@[^/]+\//, "")
  const facets = facetsFor(ctx, widgetId)
  const permissions = permissionsFor(ctx)
  const previews = previewsFor(ctx, slug)
  return numbers.map((version, v) => {
    const at = times[v] ?? now.getTime() - dayMs
    const hasProvenance = ctx.repositoryUrl !== null && rng.chance(0.6)
    const latest = v === numbers.length - 1
    return {
      version,
      publishedAt: new Date(at).toISOString(),
      indexedAt: new Date(at + rng.int(2, 90) * minuteMs).toISOString(),
      registryIntegrity: fakeIntegrity(rng),
      tarballSha512Verified: ctx.status !== "unreviewed" || rng.chance(0.5),
      hasProvenance,
      // Older releases often predate the README; the latest one usually has it.
      readmeHtml: rng.chance(latest ? 0.9 : 0.5) ? readmeFor(ctx, version, permissions) : null,
      platforms,
      facets,
      permissions,
      // Screenshots are refreshed only for recent releases.
      previews: latest || v === numbers.length - 2 ? previews : [],
      securityChecks: securityChecksFor(ctx, hasProvenance)
    }
  })
}

// ---------------------------------------------------------------------------
// Packages
// ---------------------------------------------------------------------------

const licenses = ["MIT", "MIT", "MIT", "Apache-2.0", "Apache-2.0", "ISC", "BSD-3-Clause", "MPL-2.0", "GPL-3.0-only"]

/** Skills talk rather than show, so the category's UI-flavoured endings do not fit them. */
const skillBenefits = [
  "in plain language",
  "and cites where every answer came from",
  "in your own tone of voice",
  "without leaving the conversation"
]

const describe = (rng: Rng, kind: Kind, topic: Topic, category: CategorySpec): string => {
  const opening = rng.pick(kindSpecs[kind].describe)(topic.object)
  const benefits = kind === "theme"
    ? category.benefits
    : kind === "skill"
    ? skillBenefits
    : [...category.benefits, ...genericBenefits]
  return `${opening} ${rng.pick(benefits)}.`
}

const keywordsFor = (rng: Rng, kind: Kind, topic: Topic, category: CategorySpec): Array<string> => {
  const words = new Set<string>(topic.word.split("-").filter((w) => w.length > 2))
  words.add(rng.pick(category.keywords))
  if (rng.chance(0.5)) words.add(rng.pick(category.keywords))
  if (kind !== "theme" && rng.chance(0.6)) words.add(kind)
  // Keep 2-6: a one-word topic with one category keyword gets the category slug too.
  if (words.size < 2) words.add(category.slug)
  return [...words].slice(0, 6)
}

const buildPackage = (now: Date, category: CategorySpec, topic: Topic, index: number): ImportPackageInput => {
  const rng = mulberry32(mixSeed(demoSeed, hashString(topic.word)))
  const kind = topic.kind ?? rng.pick(category.kinds)
  const spec = kindSpecs[kind]
  const [suffix, suffixLabel] = topic.kind !== undefined ? (spec.suffixes[0] as readonly [string, string]) : rng.pick(spec.suffixes)
  const publisher = publisherBySlug.get(topic.publisher ?? rng.pick(category.publishers)) as PublisherSpec
  const base = `${topic.word}-${suffix}`
  // Scoped publishers still release some packages under bare names, as on npm.
  const scoped = publisher.scope !== undefined && (topic.publisher !== undefined || rng.chance(0.6))
  const name = scoped ? `@${publisher.scope}/${base}` : base
  const displayName = `${topic.label} ${suffixLabel}`
  const description = describe(rng, kind, topic, category)
  const status = curationFor(index)
  const openSource = rng.chance(0.9)
  const repositoryUrl = openSource ? `https://github.com/${publisher.github}/${base}` : null
  const ctx: PackageContext = { rng, name, displayName, description, kind, category, topic, status, repositoryUrl }
  const versions = versionsFor(ctx, now, name.replace("@", "").replace("/", "-"))
  return {
    name,
    displayName,
    description,
    publisher: publisher.slug,
    categorySlug: category.slug,
    curationStatus: status,
    keywords: keywordsFor(rng, kind, topic, category),
    homepage: rng.chance(0.85) ? `https://${publisher.domain}/${base}` : null,
    repositoryUrl,
    license: openSource ? rng.pick(licenses) : null,
    updatedAt: (versions[versions.length - 1] as ImportVersionInput).indexedAt,
    versions
  }
}

const buildPackages = (now: Date): Array<ImportPackageInput> => {
  const out: Array<ImportPackageInput> = []
  const seen = new Set<string>()
  for (const category of categories) {
    for (const topic of category.topics) {
      const pkg = buildPackage(now, category, topic, out.length)
      // Topic words are unique, so names are too; fail loudly if a table edit breaks that.
      if (seen.has(pkg.name)) throw new Error(`demo catalogue: duplicate package name ${pkg.name}`)
      seen.add(pkg.name)
      out.push(pkg)
    }
  }
  return out
}

// ---------------------------------------------------------------------------
// Collections
// ---------------------------------------------------------------------------

const isPublic = (pkg: ImportPackageInput): boolean => pkg.curationStatus === "listed" || pkg.curationStatus === "featured"

const buildCollections = (packages: ReadonlyArray<ImportPackageInput>): Array<CollectionInput> => {
  const featured = packages.filter((p) => p.curationStatus === "featured")
  const hidden = packages.find((p) => p.curationStatus === "hidden")
  const outdoors = packages.filter((p) => isPublic(p) && /\b(map|weather|trail|hiking)\b/.test(p.description ?? ""))
  const focus = packages.filter((p) =>
    isPublic(p) && (p.categorySlug === "productivity" || p.categorySlug === "writing") && p.name.includes("widget")
  )
  const themes = packages.filter((p) => p.categorySlug === "themes")

  const pickNotes = [
    "Our favourite way to start the morning.",
    "Small, fast and beautifully made.",
    "The one the whole team ended up installing.",
    null,
    "A great first package if you are new to Clark.",
    null,
    "Quietly excellent."
  ]
  const editorsPicks = [
    ...featured.slice(0, 7).map((p, i) => ({ packageName: p.name, note: pickNotes[i] ?? null })),
    // Curators keep hidden packages in collections while they are being fixed; the public
    // collection view must leave them out.
    ...(hidden === undefined ? [] : [{ packageName: hidden.name, note: "Hidden until the maintainer ships the sync fix." }])
  ]

  return [
    {
      slug: "editors-picks",
      title: "Editors' picks",
      description: "Packages the curation team keeps coming back to.",
      published: true,
      position: 0,
      items: editorsPicks
    },
    {
      slug: "maps-weather-and-outdoors",
      title: "Maps, weather and the outdoors",
      description: "Plan the route, check the sky, find the trail.",
      published: true,
      position: 1,
      items: outdoors.slice(0, 6).map((p, i) => ({ packageName: p.name, note: i === 0 ? "Our pick for planning a weekend outside." : null }))
    },
    {
      slug: "focus-and-flow",
      title: "Focus and flow",
      description: "Widgets that help you do one thing at a time.",
      published: true,
      position: 2,
      items: focus.slice(0, 6).map((p) => ({ packageName: p.name }))
    },
    {
      slug: "cosy-winter-themes",
      title: "Cosy themes for winter evenings",
      description: "Warm palettes for long dark afternoons. Draft: waiting on two more submissions.",
      published: false,
      position: 3,
      items: themes.slice(0, 5).map((p, i) => ({ packageName: p.name, note: i === 0 ? "Lead image for the banner." : null }))
    }
  ]
}

// ---------------------------------------------------------------------------
// Pages
// ---------------------------------------------------------------------------

/** Block constructors with ids unique across the catalogue (`<prefix>-<n>`). */
const blockFactory = (prefix: string) => {
  let n = 0
  const block = (type: string, props: Block["props"], children?: ReadonlyArray<Block>): Block => {
    n += 1
    const id = `${prefix}-${String(n).padStart(2, "0")}`
    return children === undefined ? { id, type, version: 1, props } : { id, type, version: 1, props, children }
  }
  return {
    heading: (level: 1 | 2 | 3, text: string) => block("heading", { level, text }),
    paragraph: (text: string) => block("paragraph", { text }),
    richText: (markdown: string) => block("rich_text", { markdown }),
    list: (ordered: boolean, items: ReadonlyArray<string>) => block("list", { ordered, items }),
    image: (source: { readonly src: string } | { readonly mediaId: string }, alt: string, caption: string | null) =>
      block("image", { ...source, alt, caption }),
    code: (language: string, code: string) => block("code", { language, code }),
    quote: (text: string, cite: string) => block("quote", { text, cite }),
    callout: (tone: "info" | "warning" | "success" | "danger", title: string, text: string) =>
      block("callout", { tone, title, text }),
    button: (label: string, href: string) => block("button", { label, href }),
    divider: () => block("divider", {}),
    table: (columns: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => block("table", { columns, rows }),
    section: (title: string, children: ReadonlyArray<Block>) => block("section", { title }, children),
    columns: (children: ReadonlyArray<Block>) => block("columns", {}, children),
    column: (children: ReadonlyArray<Block>) => block("column", {}, children),
    hero: (title: string, subtitle: string, cta: { readonly label: string; readonly href: string }) =>
      block("hero", { title, subtitle, cta }),
    faq: (items: ReadonlyArray<{ readonly question: string; readonly answer: string }>) => block("faq", { items }),
    packageGrid: (title: string, packageNames: ReadonlyArray<string>) => block("package_grid", { title, packageNames }),
    collectionRef: (slug: string, title: string) => block("collection_ref", { slug, title }),
    embed: (url: string, title: string) => block("embed", { url, title })
  }
}

const pageDocument = (title: string, description: string, blocks: ReadonlyArray<Block>): PageDocumentInput => ({
  schemaVersion: 1,
  layout: { id: "standard", version: 1 },
  meta: { title, description, locale: "en", noindex: false },
  blocks
})

const aboutPage = (now: Date, featuredNames: ReadonlyArray<string>): PageInput => {
  const b = blockFactory("about-r1")
  return {
    slug: "about",
    kind: "landing",
    title: "About Clark",
    revisions: [{
      createdAt: isoDaysBefore(now, 120),
      publishedAt: isoDaysBefore(now, 119),
      document: pageDocument("About Clark", "Clark is a marketplace for small, safe tools, widgets and themes.", [
        b.hero("Find the small tools that make your day", "Widgets, tools, skills and themes, reviewed by people.", {
          label: "Browse packages",
          href: "/packages"
        }),
        b.paragraph(
          "Clark is a marketplace for the little things: a calendar in the corner of your screen, a theme that is easy on the eyes, a command that tidies your invoices."
        ),
        b.packageGrid("Featured this month", featuredNames.slice(0, 6)),
        b.section("Why Clark", [
          b.columns([
            b.column([
              b.heading(3, "Safe by default"),
              b.list(false, ["Every package declares its permissions", "Widgets run in an isolated frame", "Integrity checked on install"])
            ]),
            b.column([
              b.heading(3, "Reviewed by people"),
              b.list(false, ["Curators read the code of featured packages", "Hidden packages stay out of search", "Clear reasons for every rejection"])
            ]),
            b.column([
              b.heading(3, "Made by makers"),
              b.list(false, ["Independent developers", "Verified studios", "Open source first"])
            ])
          ])
        ]),
        b.collectionRef("editors-picks", "Editors' picks"),
        b.faq([
          { question: "Is Clark free?", answer: "Browsing and installing are free. Some packages are paid by their publishers." },
          { question: "How are packages reviewed?", answer: "Automatic checks run on every release; curators review permissions before a package is listed." },
          { question: "Can I publish my own package?", answer: "Yes: publish it to the registry and it appears here once indexed." }
        ]),
        b.image({ src: "https://cdn.clark.example/pages/about/team.jpg" }, "The curation team at their weekly review", "Weekly review, every Thursday."),
        b.button("Publish your package", "/pages/docs/getting-started/install")
      ])
    }]
  }
}

const termsPage = (now: Date): PageInput => {
  const b = blockFactory("terms-r1")
  return {
    slug: "legal/terms",
    kind: "legal",
    title: "Terms of service",
    revisions: [{
      createdAt: isoDaysBefore(now, 200),
      publishedAt: isoDaysBefore(now, 198),
      document: pageDocument("Terms of service", "The terms that apply when you use the Clark marketplace.", [
        b.heading(1, "Terms of service"),
        b.paragraph("These terms apply to everyone who browses, installs or publishes packages on Clark."),
        b.callout("warning", "Summary, not a substitute", "This summary helps you read the terms; the full text below is what applies."),
        b.list(true, [
          "You may install any public package for personal or commercial use under its licence.",
          "Publishers are responsible for what their packages do.",
          "We may hide or reject packages that break these terms."
        ]),
        b.richText(
          "## Publishing\n\nBy publishing a package you confirm that you have the right to distribute it and that its **declared permissions** match what it does.\n\n## Removal\n\nWe may hide a package while we investigate a report. See the [privacy policy](/pages/legal/privacy) for what we keep."
        ),
        b.table(["Data", "Kept for"], [
          ["Install counts", "Aggregated, indefinitely"],
          ["Server logs", "30 days"],
          ["Abuse reports", "2 years"]
        ]),
        b.divider(),
        b.quote("Be excellent to each other.", "The Clark community guidelines")
      ])
    }]
  }
}

const installPage = (now: Date): PageInput => {
  const b = blockFactory("install-r1")
  return {
    slug: "docs/getting-started/install",
    kind: "docs",
    title: "Install Clark",
    revisions: [{
      createdAt: isoDaysBefore(now, 90),
      publishedAt: isoDaysBefore(now, 89),
      document: pageDocument("Install Clark", "Install the clark CLI and your first package in two minutes.", [
        b.heading(1, "Install Clark"),
        b.paragraph("The clark command installs packages from the marketplace and keeps them up to date."),
        b.callout("info", "Requirements", "Node.js 20 or later on macOS, Linux or Windows."),
        b.code("bash", "npm install --global clark\nclark --version"),
        b.heading(2, "Install your first package"),
        b.list(true, ["Find a package on the marketplace.", "Copy its install command.", "Run it in a terminal."]),
        b.code("bash", "clark install @acme/notes-widget"),
        b.image({ mediaId: "media-install-terminal" }, "A terminal after a successful clark install", null),
        b.embed("https://video.clark.example/embed/install-walkthrough", "Installing Clark, a two-minute walkthrough"),
        b.callout("success", "Done", "The widget appears on your dashboard after the next refresh.")
      ])
    }]
  }
}

/** A page still being written: only a draft revision, so it is not served yet. */
const roadmapPage = (now: Date): PageInput => {
  const b = blockFactory("roadmap-r1")
  return {
    slug: "roadmap",
    kind: "custom",
    title: "Roadmap",
    revisions: [{
      createdAt: isoDaysBefore(now, 3),
      document: pageDocument("Roadmap", "What we are building next.", [
        b.heading(1, "Roadmap"),
        b.paragraph("A draft of what the team plans for the next two quarters."),
        b.list(false, ["Paid packages", "Team collections", "Offline installs"]),
        b.callout("danger", "Draft", "Not for publication before the planning review.")
      ])
    }]
  }
}

/** Two revisions: the published one is served while the newer draft is being edited. */
const privacyPage = (now: Date): PageInput => {
  const v1 = blockFactory("privacy-r1")
  const v2 = blockFactory("privacy-r2")
  return {
    slug: "legal/privacy",
    kind: "legal",
    title: "Privacy policy",
    revisions: [
      {
        createdAt: isoDaysBefore(now, 300),
        publishedAt: isoDaysBefore(now, 299),
        document: pageDocument("Privacy policy", "What Clark collects and why.", [
          v1.heading(1, "Privacy policy"),
          v1.paragraph("We collect as little as we can: anonymous install counts and the logs needed to keep the service running.")
        ])
      },
      {
        createdAt: isoDaysBefore(now, 5),
        publishedAt: null,
        document: pageDocument("Privacy policy", "What Clark collects and why, updated for accounts.", [
          v2.heading(1, "Privacy policy"),
          v2.paragraph("We collect as little as we can: anonymous install counts and the logs needed to keep the service running."),
          v2.heading(2, "Accounts"),
          v2.paragraph("If you create an account we also keep your email address and the packages you publish.")
        ])
      }
    ]
  }
}

// ---------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------

export const demoCatalog = (now: Date): ImportDocumentInput => {
  const packages = buildPackages(now)
  const featuredNames = packages.filter((p) => p.curationStatus === "featured").map((p) => p.name)
  const categoryInputs: Array<ImportCategoryInput> = categories.map((c, position) => ({
    slug: c.slug,
    name: c.name,
    description: c.description,
    position
  }))
  const publisherInputs: Array<ImportPublisherInput> = publishers.map((p) => ({ slug: p.slug, name: p.name, verified: p.verified }))
  return {
    categories: categoryInputs,
    publishers: publisherInputs,
    packages,
    collections: buildCollections(packages),
    pages: [aboutPage(now, featuredNames), termsPage(now), installPage(now), roadmapPage(now), privacyPage(now)]
  }
}
