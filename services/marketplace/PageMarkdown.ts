/**
 * Renders a published marketplace page as Markdown (for `?format=md`, feeds and
 * text-only clients).
 *
 * Block props are untrusted JSON, so every prop is read defensively: a prop of
 * the wrong type is treated as absent and rendering never throws. Plain text is
 * escaped so it cannot create Markdown or HTML structure; only `rich_text`
 * carries authored Markdown, and even there raw HTML is removed.
 */
import { slugPattern } from "../../schema/common/Text.js"
import type { Block, PublishedPage } from "../../schema/marketplace/Page.js"

type Props = { readonly [key: string]: unknown }
type Render = (props: Props, block: Block) => ReadonlyArray<string>

const isRecord = (u: unknown): u is Props => typeof u === "object" && u !== null && !Array.isArray(u)

// Own keys only, so a prop named e.g. `constructor` never resolves to Object.prototype.
const prop = (props: Props, key: string): unknown => (Object.hasOwn(props, key) ? props[key] : undefined)

const str = (props: Props, key: string): string => {
  const value = prop(props, key)
  return typeof value === "string" ? value : ""
}

const strings = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((x): x is string => typeof x === "string") : []

const records = (u: unknown): ReadonlyArray<Props> => (Array.isArray(u) ? u.filter(isRecord) : [])

const nonEmpty = (s: string): boolean => s !== ""

// ---------------------------------------------------------------------------
// Text

// C0/C1 controls except tab and newline (CR is normalised to LF first).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g

const clean = (s: string): string => s.replace(/\r\n?/g, "\n").replace(CONTROL, "")

const escapeLine = (line: string): string =>
  line
    // Leading indentation would make an indented code block, trailing spaces a hard break.
    .trim()
    // `|` too: otherwise two plain lines can form a GFM table.
    .replace(/[\\`*_[\]<>|]/g, "\\$&")
    // Block markers only count at line start...
    .replace(/^[#+=~-]/, "\\$&")
    .replace(/^(\d+)([.)])(?=\s|$)/, "$1\\$2")
    // ...except a trailing ` #` run, which closes an ATX heading.
    .replace(/ (#+)$/, " \\$1")

/** Escapes plain text for Markdown, keeping line breaks (blank lines separate paragraphs). */
export const escapeText = (s: string): string =>
  clean(s).split("\n").map(escapeLine).join("\n").replace(/\n{3,}/g, "\n\n").trim()

/** Escapes text that must stay on one line (headings, list items, cells, link text). */
const escapeInline = (s: string): string => escapeLine(clean(s).replace(/\s+/g, " "))

const longestBacktickRun = (s: string): number =>
  (s.match(/`+/g) ?? []).reduce((max, run) => Math.max(max, run.length), 0)

// A span fence longer than any run inside cannot be closed early by the content.
const codeSpan = (s: string): string => {
  const fence = "`".repeat(longestBacktickRun(s) + 1)
  const pad = /^`|`$/.test(s) ? " " : ""
  return `${fence}${pad}${s}${pad}${fence}`
}

// ---------------------------------------------------------------------------
// Links

// Allow-list: javascript:, data:, vbscript: and protocol-relative `//host` all fall through.
const SAFE_HREF = /^(?:https?:\/\/|mailto:|\/(?![/\\])|#)/i

const safeHref = (u: unknown): string | undefined => {
  if (typeof u !== "string") return undefined
  const href = clean(u).trim()
  return SAFE_HREF.test(href) ? href : undefined
}

// Whitespace, parentheses, angle brackets and backslashes would end or reshape `(destination)`.
const encodeUrl = (href: string): string =>
  href.replace(/[\s()<>\\]/g, (c) =>
    c.charCodeAt(0) < 0x80 ? `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}` : encodeURIComponent(c)
  )

/** A link when the href is safe, otherwise just the label (empty when there is none). */
const link = (label: string, href: unknown): string => {
  const url = safeHref(href)
  const text = escapeInline(label)
  if (url === undefined) return text
  return `[${text === "" ? escapeInline(url) : text}](${encodeUrl(url)})`
}

// ---------------------------------------------------------------------------
// rich_text: trusted Markdown, minus raw HTML

// Inline tokens, matched left to right as a CommonMark inline parser would. Escapes,
// code spans and autolinks are kept verbatim (`<div>` in backticks is text, not
// HTML); tags, comments and declarations are dropped; any other `<` that could open
// HTML is escaped. Lone backtick runs are matched only so they can be detected.
const ESCAPE = /\\[\s\S]/.source
const CODE_SPAN = /(?<!`)(?<tick>`+)(?!`)[^\n]*?(?<!`)\k<tick>(?!`)/.source
const AUTOLINK = /<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>/.source
const HTML = [
  /<!--[\s\S]*?-->/.source,
  /<\?[\s\S]*?\?>/.source,
  /<!\[CDATA\[[\s\S]*?\]\]>/.source,
  /<![A-Za-z][^<>]*>/.source,
  /<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?>/.source
].join("|")
const inlineTokens = (withCodeSpans: boolean): RegExp =>
  new RegExp([ESCAPE, ...(withCodeSpans ? [CODE_SPAN] : []), AUTOLINK, HTML, "`+", /<(?=[A-Za-z/!?])/.source].join("|"), "g")
const WITH_CODE_SPANS = inlineTokens(true)
const WITHOUT_CODE_SPANS = inlineTokens(false)
const IS_AUTOLINK = new RegExp(`^(?:${AUTOLINK})$`)

// Code spans only protect their content when we pair backticks exactly as CommonMark
// would: every run closes on its own line, and no span holds a `|` (a GFM table row
// is split into cells before code spans are found). Otherwise nothing in the
// paragraph counts as code, which is lossy but never lets a tag through.
const codeSpansAreSafe = (paragraph: string): boolean =>
  Array.from(paragraph.matchAll(WITH_CODE_SPANS), (m) => m[0]).every(
    (token) => !token.startsWith("`") || (!/^`+$/.test(token) && !token.includes("|"))
  )

const neutralise = (token: string): string =>
  token === "<" ? "\\<" : token.startsWith("<") && !IS_AUTOLINK.test(token) ? "" : token

const stripParagraph = (paragraph: string): string => {
  let out = paragraph
  // Removing `<b>` from `<<b>i>` leaves a new tag, so repeat until nothing changes.
  for (let pass = 0; pass < 10; pass++) {
    const next = out.replace(codeSpansAreSafe(out) ? WITH_CODE_SPANS : WITHOUT_CODE_SPANS, neutralise)
    if (next === out) return out
    out = next
  }
  // Pathological nesting: keep nothing that could still be markup.
  return out.replace(/</g, "&lt;")
}

// Inline HTML and code spans never cross a blank line.
const stripTags = (prose: string): string =>
  prose
    .split(/(\n[ \t]*\n)/)
    .map((part, i) => (i % 2 === 1 ? part : stripParagraph(part)))
    .join("")

// Only unindented fences are trusted as code: an indented one may belong to a list
// item that ends earlier than we would think, exposing its "code" as HTML.
const OPEN_FENCE = /^(?:`{3,}(?!.*`)|~{3,})/

const stripHtml = (markdown: string): string => {
  const out: Array<string> = []
  let prose: Array<string> = []
  const flushProse = () => {
    if (prose.length === 0) return
    for (const line of stripTags(prose.join("\n")).split("\n")) {
      const blank = /^[ \t]*$/.test(line)
      // Runs of blank lines mean the same as one; keep the page's single-blank-line rhythm.
      if (!blank || (out.length > 0 && out.at(-1) !== "")) out.push(blank ? "" : line)
    }
    prose = []
  }
  let close: RegExp | undefined
  for (const line of clean(markdown).split("\n")) {
    if (close !== undefined) {
      out.push(line)
      if (close.test(line)) close = undefined
      continue
    }
    const fence = OPEN_FENCE.exec(line)?.[0]
    if (fence === undefined) {
      prose.push(line)
      continue
    }
    flushProse()
    out.push(line)
    close = new RegExp(`^ {0,3}${fence[0]}{${fence.length},}[ \\t]*$`)
  }
  flushProse()
  return out.join("\n").trimEnd()
}

// ---------------------------------------------------------------------------
// Blocks

const heading = (level: number, text: string): string => {
  const escaped = escapeInline(text)
  return escaped === "" ? "" : `${"#".repeat(level)} ${escaped}`
}

// The page title is the only H1, so block level 1 renders as H2.
const headingLevel = (u: unknown): number =>
  Math.min(6, (typeof u === "number" && Number.isFinite(u) ? Math.max(1, Math.round(u)) : 2) + 1)

const blockquote = (chunks: ReadonlyArray<string>): string => {
  const body = chunks.filter(nonEmpty).join("\n\n")
  return body === "" ? "" : body.split("\n").map((line) => (line === "" ? ">" : `> ${line}`)).join("\n")
}

const image = (p: Props): ReadonlyArray<string> => {
  const mediaId = clean(str(p, "mediaId")).trim()
  const src = safeHref(prop(p, "src")) ?? (mediaId === "" ? undefined : `media:${mediaId}`)
  const caption = escapeInline(str(p, "caption"))
  return [
    [src === undefined ? "" : `![${escapeInline(str(p, "alt"))}](${encodeUrl(src)})`, caption === "" ? "" : `*${caption}*`]
      .filter(nonEmpty)
      .join("\n")
  ]
}

const code = (p: Props): ReadonlyArray<string> => {
  const source = prop(p, "code")
  if (typeof source !== "string") return []
  const body = clean(source).replace(/\n+$/, "")
  const fence = "`".repeat(Math.max(3, longestBacktickRun(body) + 1))
  // The info string must not contain backticks (or anything else surprising).
  const language = str(p, "language").replace(/[^\w+#.-]/g, "")
  return [[fence + language, ...(body === "" ? [] : [body]), fence].join("\n")]
}

const quote = (p: Props): ReadonlyArray<string> => {
  const cite = escapeInline(str(p, "cite"))
  return [blockquote([escapeText(str(p, "text")), cite === "" ? "" : `— ${cite}`])]
}

const TONES: ReadonlyMap<string, string> = new Map([
  ["info", "Info"],
  ["warning", "Warning"],
  ["success", "Success"],
  ["danger", "Danger"]
])

const callout: Render = (p, block) => {
  const label = `**${TONES.get(str(p, "tone")) ?? "Info"}:**`
  const title = escapeInline(str(p, "title"))
  const text = escapeText(str(p, "text"))
  const intro = title !== "" ? [`${label} ${title}`, text] : [text === "" ? label : `${label} ${text}`]
  return [blockquote([...intro, ...renderChildren(block)])]
}

const tableRow = (cells: ReadonlyArray<string>): string => `| ${cells.join(" | ")} |`
const tableCell = (u: unknown): string => (typeof u === "string" ? escapeInline(u) : "")

const table = (p: Props): ReadonlyArray<string> => {
  const columns = prop(p, "columns")
  const header = Array.isArray(columns) ? columns.map(tableCell) : []
  if (header.length === 0) return []
  const rows = prop(p, "rows")
  const body = (Array.isArray(rows) ? rows : [])
    .filter((row): row is Array<unknown> => Array.isArray(row))
    .map((row) => tableRow(header.map((_, i) => tableCell(row[i]))))
  return [[tableRow(header), tableRow(header.map(() => "---")), ...body].join("\n")]
}

const hero = (p: Props): ReadonlyArray<string> => {
  const cta = prop(p, "cta")
  return [
    heading(2, str(p, "title")),
    escapeText(str(p, "subtitle")),
    isRecord(cta) ? link(str(cta, "label"), prop(cta, "href")) : ""
  ]
}

const faq = (p: Props): ReadonlyArray<string> =>
  records(prop(p, "items")).flatMap((item) => {
    const question = heading(3, str(item, "question"))
    return question === "" ? [] : [question, escapeText(str(item, "answer"))]
  })

const packageGrid = (p: Props): ReadonlyArray<string> => {
  const names = strings(prop(p, "packageNames"))
    .map((name) => clean(name).replace(/\s+/g, " ").trim())
    .filter(nonEmpty)
  return [heading(3, str(p, "title")), names.map((name) => `- ${codeSpan(name)}`).join("\n")]
}

const collectionRef = (p: Props): ReadonlyArray<string> => {
  const slug = str(p, "slug")
  const href = slugPattern.test(slug) ? `/collections/${slug}` : undefined
  const title = str(p, "title").trim()
  return [link(title === "" && href !== undefined ? slug : title, href)]
}

/**
 * A list's text plus everything rendered after it. Nested `list` children are
 * indented under the last item; other children follow the list.
 */
const listParts = (p: Props, block: Block): { readonly list: string; readonly after: ReadonlyArray<string> } => {
  const ordered = prop(p, "ordered") === true
  const items = strings(prop(p, "items")).map(escapeInline).filter(nonEmpty)
  const lines = items.map((item, i) => `${ordered ? `${i + 1}.` : "-"} ${item}`)
  // Nested content must start at the last item's content column.
  const indent = " ".repeat(ordered ? `${items.length}. `.length : 2)
  const after: Array<string> = []
  for (const child of children(block)) {
    if (lines.length > 0 && isRecord(child) && child.type === "list" && isRecord(child.props)) {
      const nested = listParts(child.props, child)
      if (nested.list !== "") lines.push(nested.list.replace(/^/gm, indent))
      after.push(...nested.after)
    } else {
      after.push(...renderBlock(child))
    }
  }
  return { list: lines.join("\n"), after }
}

const leaf = (render: (props: Props) => ReadonlyArray<string>): Render => (props, block) => [
  ...render(props),
  ...renderChildren(block)
]

const paragraph = leaf((p) => [escapeText(str(p, "text"))])

const renderers: ReadonlyMap<string, Render> = new Map<string, Render>([
  ["heading", leaf((p) => [heading(headingLevel(prop(p, "level")), str(p, "text"))])],
  ["paragraph", paragraph],
  ["rich_text", leaf((p) => [stripHtml(str(p, "markdown"))])],
  ["list", (p, block) => {
    const { after, list } = listParts(p, block)
    return [list, ...after]
  }],
  ["image", leaf(image)],
  ["code", leaf(code)],
  ["quote", leaf(quote)],
  ["callout", callout],
  ["button", leaf((p) => [link(str(p, "label"), prop(p, "href"))])],
  ["divider", leaf(() => ["---"])],
  ["table", leaf(table)],
  ["section", leaf((p) => [heading(2, str(p, "title"))])],
  ["columns", leaf(() => [])],
  ["column", leaf(() => [])],
  ["hero", leaf(hero)],
  ["faq", leaf(faq)],
  ["package_grid", leaf(packageGrid)],
  ["collection_ref", leaf(collectionRef)],
  ["embed", leaf((p) => [link(str(p, "title"), prop(p, "url"))])]
])

const children = (block: Block): ReadonlyArray<Block> => (Array.isArray(block.children) ? block.children : [])

/** Rendered chunks of one block and its descendants; each chunk is a Markdown block. */
const renderBlock = (block: Block): Array<string> => {
  if (!isRecord(block)) return []
  const props = isRecord(block.props) ? block.props : {}
  // Unknown types still show their `text` and children rather than vanishing.
  const render = (typeof block.type === "string" ? renderers.get(block.type) : undefined) ?? paragraph
  return render(props, block).filter(nonEmpty)
}

const renderChildren = (block: Block): Array<string> => children(block).flatMap(renderBlock)

export const renderPageMarkdown = (page: PublishedPage): string => {
  const { blocks, meta } = page.document
  const title = escapeInline(meta.title) || escapeInline(page.page.title) || escapeInline(page.page.slug)
  return [`# ${title}`, escapeText(meta.description), ...blocks.flatMap(renderBlock)].filter(nonEmpty).join("\n\n") +
    "\n"
}
