/**
 * renderPageMarkdown on nested and unknown blocks, hostile props and arbitrary
 * input (never throws, keeps the document shape), and escapeText.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import type { Block } from "../../schema/marketplace/Page.js"
import { escapeText } from "../../services/marketplace/PageMarkdown.js"
import { block, doc, md } from "./fixtures/PageDocuments.js"

describe("renderPageMarkdown", () => {
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
