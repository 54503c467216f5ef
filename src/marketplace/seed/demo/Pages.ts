/** The demo marketplace's pages: about, terms, install, roadmap and privacy, as page-builder documents. */
import type { ImportPage } from "../../../../schema/marketplace/Import.js"
import type { Block, PageDocument } from "../../../../schema/marketplace/Page.js"
import { isoDaysBefore } from "./Versions.js"

type PageInput = typeof ImportPage.Encoded
type PageDocumentInput = typeof PageDocument.Encoded

// ---------------------------------------------------------------------------
// Pages
// ---------------------------------------------------------------------------

/** Block constructors with ids unique across the catalogue (`<prefix>-<n>`). */
export const blockFactory = (prefix: string) => {
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

export const pageDocument = (title: string, description: string, blocks: ReadonlyArray<Block>): PageDocumentInput => ({
  schemaVersion: 1,
  layout: { id: "standard", version: 1 },
  meta: { title, description, locale: "en", noindex: false },
  blocks
})

export const aboutPage = (now: Date, featuredNames: ReadonlyArray<string>): PageInput => {
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

export const termsPage = (now: Date): PageInput => {
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

export const installPage = (now: Date): PageInput => {
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
export const roadmapPage = (now: Date): PageInput => {
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
export const privacyPage = (now: Date): PageInput => {
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
