import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import type { Block, PublishedPage } from "../../schema/marketplace/Page.js"
import { escapeText, renderPageMarkdown } from "../../services/marketplace/PageMarkdown.js"

const page = (
  blocks: ReadonlyArray<Block>,
  meta: { readonly title?: string; readonly description?: string } = {}
): PublishedPage => ({
  page: { id: "pg_1", slug: "about", kind: "custom", title: "About us" },
  revisionId: "rev_1",
  revisionNumber: 3,
  publishedAt: "2024-05-01T12:00:00.000Z",
  document: {
    schemaVersion: 1,
    layout: { id: "default", version: 1 },
    meta: { title: meta.title ?? "T", description: meta.description ?? "", locale: "en", noindex: false },
    blocks
  }
})

let ids = 0
const block = (type: string, props: Block["props"] = {}, children?: ReadonlyArray<Block>): Block => ({
  id: `b${++ids}`,
  type,
  version: 1,
  props,
  ...(children === undefined ? {} : { children })
})

/** Renders blocks under the fixed title `# T` and no description. */
const md = (...blocks: ReadonlyArray<Block>): string => renderPageMarkdown(page(blocks))

/** The expected document: title, then each chunk separated by one blank line. */
const doc = (...chunks: ReadonlyArray<string>): string => ["# T", ...chunks].join("\n\n") + "\n"

describe("renderPageMarkdown", () => {
  describe("document layout", () => {
    it("renders title, description and blocks separated by blank lines with one trailing newline", () => {
      const out = renderPageMarkdown(
        page(
          [block("paragraph", { text: "First." }), block("divider"), block("paragraph", { text: "Last." })],
          { title: "Welcome", description: "All about *us*." }
        )
      )
      expect(out).toBe("# Welcome\n\nAll about \\*us\\*.\n\nFirst.\n\n---\n\nLast.\n")
    })

    it("falls back to the page title and omits an empty description", () => {
      expect(renderPageMarkdown(page([], { title: "  ", description: "" }))).toBe("# About us\n")
    })

    it("skips blocks that render to nothing without leaving extra blank lines", () => {
      expect(md(block("paragraph", { text: "a" }), block("paragraph", {}), block("heading", {}), block("paragraph", { text: "b" })))
        .toBe(doc("a", "b"))
    })
  })

  describe("block types", () => {
    it("heading: offsets levels by one, defaults to 2 and clamps", () => {
      expect(
        md(
          block("heading", { level: 1, text: "One" }),
          block("heading", { text: "Default" }),
          block("heading", { level: 4, text: "Four" }),
          block("heading", { level: 6, text: "Six" }),
          block("heading", { level: 99, text: "Huge" }),
          block("heading", { level: -3, text: "Tiny" }),
          block("heading", { level: 2.6, text: "Rounded" })
        )
      ).toBe(doc("## One", "### Default", "##### Four", "###### Six", "###### Huge", "## Tiny", "#### Rounded"))
    })

    it("heading: escapes a leading and a closing # run", () => {
      expect(md(block("heading", { level: 1, text: "# C# rocks #" }))).toBe(doc("## \\# C# rocks \\#"))
    })

    it("paragraph: escapes text and keeps paragraph breaks", () => {
      expect(md(block("paragraph", { text: "Line *one*\nline_two\n\n\n\nNext [para]" }))).toBe(
        doc("Line \\*one\\*\nline\\_two\n\nNext \\[para\\]")
      )
    })

    it("rich_text: passes Markdown through and removes raw HTML tags", () => {
      const markdown = "## Intro\n\nSome **bold** <b>html</b> and <!-- note --> a <https://x.dev> link.\n\n<div class=\"x\">\n\n- item"
      expect(md(block("rich_text", { markdown }))).toBe(
        doc("## Intro\n\nSome **bold** html and  a <https://x.dev> link.\n\n- item")
      )
    })

    it("rich_text: keeps tags inside code spans and fenced code", () => {
      const markdown = "Use `<div>` here.\n\n```html\n<div>hi</div>\n```\n\n<i>gone</i>"
      expect(md(block("rich_text", { markdown }))).toBe(doc("Use `<div>` here.\n\n```html\n<div>hi</div>\n```\n\ngone"))
    })

    it("list: unordered and ordered", () => {
      expect(
        md(block("list", { items: ["a", "b *c*"] }), block("list", { ordered: true, items: ["one", "two"] }))
      ).toBe(doc("- a\n- b \\*c\\*", "1. one\n2. two"))
    })

    it("list: nested list children are indented under the last item, at any depth", () => {
      const deepest = block("list", { items: ["z"] })
      const inner = block("list", { ordered: true, items: ["x", "y"] }, [deepest])
      const outer = block("list", { items: ["a", "b"] }, [inner, block("paragraph", { text: "after" })])
      expect(md(outer)).toBe(doc("- a\n- b\n  1. x\n  2. y\n     - z", "after"))
    })

    it("list: nests under a wide ordered marker", () => {
      const items = Array.from({ length: 10 }, (_, i) => `i${i + 1}`)
      const out = md(block("list", { ordered: true, items }, [block("list", { items: ["n"] })]))
      expect(out.endsWith("9. i9\n10. i10\n    - n\n")).toBe(true)
    })

    it("image: src or media id, alt and caption", () => {
      expect(
        md(
          block("image", { src: "https://cdn.example/a b.png", alt: "A [logo]", caption: "Our *logo*" }),
          block("image", { mediaId: "med_42", alt: "Media" }),
          block("image", { src: "/img/(1).png", alt: "" })
        )
      ).toBe(
        doc(
          "![A \\[logo\\]](https://cdn.example/a%20b.png)\n*Our \\*logo\\**",
          "![Media](media:med_42)",
          "![](/img/%281%29.png)"
        )
      )
    })

    it("code: fenced with language", () => {
      expect(md(block("code", { language: "ts", code: "const x = 1\n" }))).toBe(doc("```ts\nconst x = 1\n```"))
    })

    it("quote: text lines and cite", () => {
      expect(md(block("quote", { text: "Great tool.\nReally.", cite: "Ada" }), block("quote", { text: "Solo" }))).toBe(
        doc("> Great tool.\n> Really.\n>\n> — Ada", "> Solo")
      )
    })

    it("callout: tone label, title, text and children inside the quote", () => {
      expect(
        md(
          block("callout", { tone: "warning", title: "Heads up", text: "Back up first." }, [
            block("list", { items: ["one"] })
          ]),
          block("callout", { tone: "success", text: "Done." }),
          block("callout", { tone: "shouting", text: "Unknown tone." }),
          block("callout", { tone: "danger" })
        )
      ).toBe(
        doc(
          "> **Warning:** Heads up\n>\n> Back up first.\n>\n> - one",
          "> **Success:** Done.",
          "> **Info:** Unknown tone.",
          "> **Danger:**"
        )
      )
    })

    it("button: safe hrefs become links", () => {
      expect(
        md(
          block("button", { label: "Get started", href: "https://example.com/start?a=(1)" }),
          block("button", { label: "Mail", href: "mailto:hi@example.com" }),
          block("button", { label: "Docs", href: "/docs/getting started" }),
          block("button", { label: "Top", href: "#top" }),
          block("button", { href: "https://example.com" })
        )
      ).toBe(
        doc(
          "[Get started](https://example.com/start?a=%281%29)",
          "[Mail](mailto:hi@example.com)",
          "[Docs](/docs/getting%20started)",
          "[Top](#top)",
          "[https://example.com](https://example.com)"
        )
      )
    })

    it("divider", () => {
      expect(md(block("divider"))).toBe(doc("---"))
    })

    it("table: GFM with escaped cells, rows padded and truncated", () => {
      expect(
        md(
          block("table", {
            columns: ["Name", "Notes"],
            rows: [["a|b", "*x*"], ["only"], ["1", "2", "3"], "not a row"]
          })
        )
      ).toBe(doc("| Name | Notes |\n| --- | --- |\n| a\\|b | \\*x\\* |\n| only |  |\n| 1 | 2 |"))
    })

    it("table: without columns renders nothing", () => {
      expect(md(block("table", { columns: [], rows: [["a"]] }))).toBe(doc())
    })

    it("section: optional title then children", () => {
      expect(
        md(
          block("section", { title: "Features" }, [block("paragraph", { text: "Fast." })]),
          block("section", {}, [block("paragraph", { text: "Untitled." })])
        )
      ).toBe(doc("## Features", "Fast.", "Untitled."))
    })

    it("columns: each column's children one after another", () => {
      expect(
        md(
          block("columns", {}, [
            block("column", {}, [block("paragraph", { text: "Left" })]),
            block("column", {}, [block("paragraph", { text: "Right" })])
          ])
        )
      ).toBe(doc("Left", "Right"))
    })

    it("hero: title, subtitle and call to action", () => {
      expect(
        md(
          block("hero", { title: "Ship faster", subtitle: "Packages you trust.", cta: { label: "Browse", href: "/packages" } })
        )
      ).toBe(doc("## Ship faster", "Packages you trust.", "[Browse](/packages)"))
    })

    it("faq: a heading and answer per item", () => {
      expect(
        md(
          block("faq", {
            items: [
              { question: "Is it free?", answer: "Yes." },
              { question: "Why?", answer: 42 },
              { answer: "orphan" },
              "junk"
            ]
          })
        )
      ).toBe(doc("### Is it free?", "Yes.", "### Why?"))
    })

    it("package_grid: optional title and code-span names", () => {
      expect(
        md(
          block("package_grid", { title: "Popular", packageNames: ["effect", "@effect/sql", 7, "we`ird", "`tick"] }),
          block("package_grid", { packageNames: ["solo"] })
        )
      ).toBe(doc("### Popular", "- `effect`\n- `@effect/sql`\n- ``we`ird``\n- `` `tick ``", "- `solo`"))
    })

    it("collection_ref: link to the collection", () => {
      expect(
        md(
          block("collection_ref", { slug: "editors-picks", title: "Editors' picks" }),
          block("collection_ref", { slug: "new" }),
          block("collection_ref", { slug: "../admin)", title: "Bad slug" })
        )
      ).toBe(doc("[Editors' picks](/collections/editors-picks)", "[new](/collections/new)", "Bad slug"))
    })

    it("embed: title or url, same href rule as button", () => {
      expect(
        md(
          block("embed", { url: "https://youtu.be/x y", title: "Demo" }),
          block("embed", { url: "https://youtu.be/abc" }),
          block("embed", { url: "data:text/html,hi", title: "Blocked" }),
          block("embed", { url: "data:text/html,hi" })
        )
      ).toBe(doc("[Demo](https://youtu.be/x%20y)", "[https://youtu.be/abc](https://youtu.be/abc)", "Blocked"))
    })
  })

  describe("nesting", () => {
    it("renders a section containing columns containing a list", () => {
      const tree = block("section", { title: "Compare" }, [
        block("columns", {}, [
          block("column", {}, [
            block("heading", { level: 3, text: "Free" }),
            block("list", { items: ["1 project", "Community"] }, [block("list", { items: ["forum"] })])
          ]),
          block("column", {}, [block("heading", { level: 3, text: "Pro" }), block("list", { items: ["Unlimited"] })])
        ])
      ])
      expect(md(tree)).toBe(
        doc("## Compare", "#### Free", "- 1 project\n- Community\n  - forum", "#### Pro", "- Unlimited")
      )
    })

    it("renders children of leaf blocks after the block", () => {
      expect(md(block("paragraph", { text: "Parent" }, [block("divider", {}, [block("paragraph", { text: "Grandchild" })])])))
        .toBe(doc("Parent", "---", "Grandchild"))
    })

    it("nests callouts inside callouts", () => {
      expect(
        md(block("callout", { tone: "info", text: "Outer" }, [block("callout", { tone: "danger", text: "Inner" })]))
      ).toBe(doc("> **Info:** Outer\n>\n> > **Danger:** Inner"))
    })
  })

  describe("unknown block types", () => {
    it("renders props.text and then children", () => {
      expect(
        md(
          block("carousel", { text: "Slides" }, [block("paragraph", { text: "Slide 1" })]),
          block("spacer", { height: 40 }),
          block("mystery", { text: 12 }, [block("divider")])
        )
      ).toBe(doc("Slides", "Slide 1", "---"))
    })

    it("does not resolve types or props through Object.prototype", () => {
      expect(
        md(
          block("constructor", { text: "c" }),
          block("__proto__", { text: "p" }),
          block("toString", {}),
          block("hasOwnProperty", { text: "h" })
        )
      ).toBe(doc("c", "p", "h"))
    })
  })

  describe("hostile props", () => {
    it("ignores props of the wrong type instead of throwing", () => {
      const hostile: ReadonlyArray<Block> = [
        block("heading", { level: "1", text: 5 }),
        block("heading", { level: Number.NaN, text: "NaN level" }),
        block("paragraph", { text: { toString: "x" } }),
        block("rich_text", { markdown: ["# x"] }),
        block("list", { ordered: "yes", items: ["ok", 1, null, { a: 1 }, "   "] }),
        block("list", { items: "not an array" }),
        block("image", { src: 42, mediaId: false, alt: 1, caption: [] }),
        block("code", { language: 1, code: 1 }),
        block("quote", { text: null, cite: 3 }),
        block("callout", { tone: 1, title: 2, text: "t" }),
        block("button", { label: 1, href: 2 }),
        block("table", { columns: "a,b", rows: 1 }),
        block("table", { columns: ["A", 2], rows: [[1, "x"]] }),
        block("section", { title: 1 }),
        block("hero", { title: 1, subtitle: 2, cta: "go" }),
        block("faq", { items: { question: "q" } }),
        block("package_grid", { title: 1, packageNames: "effect" }),
        block("collection_ref", { slug: 9, title: 9 }),
        block("embed", { url: 1 })
      ]
      expect(md(...hostile)).toBe(
        doc("### NaN level", "- ok", "> **Info:** t", "| A |  |\n| --- | --- |\n|  | x |")
      )
    })

    it("survives malformed props and children objects", () => {
      const weird = [
        { id: "x", type: "paragraph", version: 1, props: null, children: "nope" },
        { id: "y", type: 7, version: 1, props: { text: "typed badly" } },
        null,
        block("paragraph", { text: "fine" }, [null as unknown as Block])
      ] as unknown as ReadonlyArray<Block>
      expect(md(...weird)).toBe(doc("typed badly", "fine"))
    })

    it("escapes HTML in plain text", () => {
      expect(
        md(
          block("paragraph", { text: "<script>alert(1)</script>" }),
          block("heading", { text: "<img src=x onerror=alert(1)>" }),
          block("list", { items: ["<b>bold</b>"] })
        )
      ).toBe(
        doc(
          "\\<script\\>alert(1)\\</script\\>",
          "### \\<img src=x onerror=alert(1)\\>",
          "- \\<b\\>bold\\</b\\>"
        )
      )
    })

    it("removes every raw HTML form from rich_text, including tags rebuilt by removal", () => {
      const markdown = [
        "<script>alert(1)</script>",
        "<<b>script>x",
        "<div",
        "a < b and <!doctype html> and <?php echo 1 ?> and <![CDATA[y]]> done"
      ].join("\n")
      expect(md(block("rich_text", { markdown }))).toBe(doc("alert(1)\nx\n\\<div\na < b and  and  and  done"))
    })

    it("trusts code spans in rich_text only where backticks pair up as CommonMark would", () => {
      const markdown = [
        "Use `Effect<A, E, R>` and `<div>`, see <https://effect.website>.",
        // The escaped backtick leaves ` and ` as the span, so <kbd> is real HTML.
        "\\`<i>x</i>` and `<kbd>`",
        // A span may continue on the next line, so nothing in this paragraph is trusted.
        "`Effect<A>\n` <i>x</i> `<b>`",
        // GFM splits table cells before finding code spans.
        "| `a|<b>` |"
      ].join("\n\n")
      expect(md(block("rich_text", { markdown }))).toBe(
        doc(
          "Use `Effect<A, E, R>` and `<div>`, see <https://effect.website>.",
          "\\`x` and ``",
          "`Effect\n` x ``",
          "| `a|` |"
        )
      )
    })

    it("does not trust indented fences in rich_text", () => {
      expect(md(block("rich_text", { markdown: "- item\n  ```\n<script>x</script>\n```" }))).toBe(
        doc("- item\n  ```\nx\n```")
      )
    })

    it("neutralises Markdown structure at line start", () => {
      expect(
        md(
          block("paragraph", {
            text: "# not a heading\n> not a quote\n- not a list\n+ nor this\n1. nor this\n2) nor this\n3.5 stars\n    not code\n===\n~~~\n[x]: https://evil.example\na | b"
          })
        )
      ).toBe(
        doc(
          "\\# not a heading\n\\> not a quote\n\\- not a list\n\\+ nor this\n1\\. nor this\n2\\) nor this\n3.5 stars\nnot code\n\\===\n\\~~~\n\\[x\\]: https://evil.example\na \\| b"
        )
      )
    })

    it("strips control characters", () => {
      expect(md(block("paragraph", { text: "a\u0000b\u0007c\u001b[31md\u009be\r\nf\rg\tok" }))).toBe(doc("abc\\[31mde\nf\ng\tok"))
    })

    it("rejects unsafe hrefs and keeps only the label", () => {
      expect(
        md(
          block("button", { label: "Click", href: "javascript:alert(1)" }),
          block("button", { label: "Click", href: " JavaScript:alert(1)" }),
          block("button", { label: "Click", href: "java\tscript:alert(1)" }),
          block("button", { label: "Data", href: "data:text/html;base64,PHNjcmlwdD4=" }),
          block("button", { label: "Proto", href: "//evil.example" }),
          block("button", { label: "Slash", href: "/\\evil.example" }),
          block("button", { href: "javascript:alert(1)" }),
          block("hero", { title: "H", cta: { label: "Go", href: "vbscript:x" } }),
          block("embed", { url: "javascript:alert(1)", title: "Embed" })
        )
      ).toBe(doc("Click", "Click", "Click", "Data", "Proto", "Slash", "## H", "Go", "Embed"))
    })

    it("keeps link text and destinations from breaking out", () => {
      expect(
        md(
          block("button", { label: "a](javascript:alert(1))", href: "https://x.dev/a b)(c)<d>\\e" }),
          block("image", { src: "https://x.dev/i.png) ![x](https://evil", alt: "alt](x)" })
        )
      ).toBe(
        doc(
          "[a\\](javascript:alert(1))](https://x.dev/a%20b%29%28c%29%3Cd%3E%5Ce)",
          "![alt\\](x)](https://x.dev/i.png%29%20![x]%28https://evil)"
        )
      )
    })

    it("code: fence is longer than any backtick run and the language cannot break it", () => {
      expect(md(block("code", { language: "js```\n<script>", code: "a ``` b\n````\n" }))).toBe(
        doc("`````jsscript\na ``` b\n````\n`````")
      )
      expect(md(block("code", { code: "" }))).toBe(doc("```\n```"))
    })
  })
})

describe("renderPageMarkdown on arbitrary input", () => {
  const types = [
    "heading", "paragraph", "rich_text", "list", "image", "code", "quote", "callout", "button", "divider", "table",
    "section", "columns", "column", "hero", "faq", "package_grid", "collection_ref", "embed"
  ]
  const keys = [
    "text", "level", "markdown", "ordered", "items", "src", "mediaId", "alt", "caption", "language", "code", "cite",
    "tone", "title", "label", "href", "columns", "rows", "subtitle", "cta", "question", "answer", "packageNames", "slug",
    "url", "constructor", "__proto__"
  ]
  const hostile = fc.oneof(
    fc.string(),
    fc.constantFrom("<script>x</script>", "javascript:alert(1)", "```", "`", "|", "\u0000", "# x", "\n\n"),
    fc.array(fc.oneof(fc.string(), fc.array(fc.string()), fc.dictionary(fc.constantFrom(...keys), fc.string()))),
    fc.anything()
  )
  const { block: arbitraryBlock } = fc.letrec((tie) => ({
    block: fc.record({
      id: fc.string(),
      type: fc.oneof(fc.constantFrom(...types), fc.string()),
      version: fc.integer(),
      props: fc.dictionary(fc.constantFrom(...keys), hostile),
      children: fc.oneof({ maxDepth: 3 }, fc.constant(undefined), fc.array(tie("block"), { maxLength: 3 }))
    })
  }))

  it("never throws and keeps the document shape", () => {
    fc.assert(
      fc.property(fc.array(arbitraryBlock, { maxLength: 4 }), (blocks) => {
        const out = md(...(blocks as unknown as ReadonlyArray<Block>))
        expect(out.startsWith("# T\n")).toBe(true)
        expect(out.endsWith("\n")).toBe(true)
        expect(out.endsWith("\n\n")).toBe(false)
      }),
      { numRuns: 300 }
    )
  })
})

describe("escapeText", () => {
  it("escapes inline Markdown and HTML but stays readable", () => {
    expect(escapeText("Use *effect* v3 & enjoy_it: `x` <b> [link](y) \\ done")).toBe(
      "Use \\*effect\\* v3 & enjoy\\_it: \\`x\\` \\<b\\> \\[link\\](y) \\\\ done"
    )
  })

  it("leaves ordinary punctuation alone", () => {
    expect(escapeText("Hello, world! It's 3.5 (approx.) - fine? C# #1")).toBe(
      "Hello, world! It's 3.5 (approx.) - fine? C# #1"
    )
  })
})
