/** The demo catalogue's categories and the topics its packages are written about. */
import type { Kind } from "./Catalogue.js"

// ---------------------------------------------------------------------------
// Categories and their topics
// ---------------------------------------------------------------------------

export interface Topic {
  /** Name stem, e.g. `calendar` gives `calendar-widget`. Unique across the catalogue. */
  readonly word: string
  readonly label: string
  /** The noun phrase the description is about, e.g. "your calendar events". */
  readonly object: string
  readonly kind?: Kind
  readonly publisher?: string
}

export interface CategorySpec {
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

export const t = (word: string, label: string, object: string, pin: Pick<Topic, "kind" | "publisher"> = {}): Topic => ({
  word,
  label,
  object,
  ...pin
})

export const genericBenefits = [
  "without sending data to the cloud",
  "with keyboard shortcuts for everything",
  "and works fully offline",
  "with a clean, accessible layout",
  "and stays out of your way until you need it"
]

// Search words ("calendar", "markdown", "weather", "invoice", "map") are deliberately
// spread over a handful of topics each, so full-text search has something to rank.
export const categories: ReadonlyArray<CategorySpec> = [
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
    hosts: ["api.github.com", "packages.example.org", "hooks.ci.example.com"],
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

