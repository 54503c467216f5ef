/**
 * renderPageMarkdown's document layout and the Markdown of every block type.
 */
import { describe, expect, it } from "@effect/vitest"
import { renderPageMarkdown } from "../../services/marketplace/PageMarkdown.js"
import { block, doc, md, page } from "./fixtures/PageDocuments.js"

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
})
