/**
 * A package's readme as the marketplace shows it: Markdown rendered by `marked`, then cleaned by
 * `sanitize-html` with an allow-list. Scripts, styles, frames and forms go with their content; event
 * handlers and every attribute not listed go; links keep only http, https and mailto (so no `javascript:`
 * or `data:`); images go entirely: a remote one would tell its host who reads the page, and a relative one
 * points into a tarball the marketplace never serves.
 */
import { marked } from "marked"
import sanitizeHtml from "sanitize-html"

/** Readmes past this many characters are cut before rendering (the listing is not the documentation). */
export const readmeLimit = 256 * 1024

const options: sanitizeHtml.IOptions = {
  allowedTags: [
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote", "pre", "code", "kbd", "samp",
    "em", "strong", "del", "s", "sup", "sub", "ul", "ol", "li", "dl", "dt", "dd", "a",
    "table", "thead", "tbody", "tr", "th", "td", "details", "summary"
  ],
  // `rel` is always the transform's below, never the readme's own.
  allowedAttributes: { a: ["href", "title", "rel"], th: ["align"], td: ["align"], ol: ["start"], code: ["class"] },
  allowedClasses: { code: [/^language-[A-Za-z0-9_+-]+$/] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  disallowedTagsMode: "discard",
  nonTextTags: ["script", "style", "textarea", "option", "noscript", "iframe", "object", "embed", "template", "svg", "math"],
  transformTags: {
    a: sanitizeHtml.simpleTransform("a", { rel: "nofollow noopener noreferrer ugc" })
  }
}

/** Safe HTML for the readme's Markdown; null for an empty readme. */
export const renderReadme = (markdown: string): string | null => {
  const source = markdown.slice(0, readmeLimit)
  if (source.trim() === "") return null
  const html = marked.parse(source, { async: false, gfm: true })
  return sanitizeHtml(html, options)
}
