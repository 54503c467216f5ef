/**
 * The rules of widget files that need no store (spec, "Artifact", "Widget routes", "Limits"): file names, the
 * check of the bytes against the declared type, `accept` lists, grants and the removal of unfinished files.
 * Pure; table-tested in test/node/artifacts/Rules.test.ts.
 */

/** A grant lasts this long from the pick or the widget's last write; an unfinished file is removed after it too. */
export const grantMillis = 24 * 60 * 60 * 1000

/** File names are cut to this many characters (extension included). */
export const maxNameLength = 120

/** The essence of a media type: `Image/PNG; q=1` → `image/png`. */
export const essence = (mimeType: string): string => (mimeType.split(";")[0] ?? "").trim().toLowerCase()

/**
 * The extension each type's files carry. Types not listed keep whatever extension the name has (or none): a
 * short table rather than a media-type database, since only the types below are sniffed or drawn by the app.
 */
const extensions: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/avif": "avif",
  "image/bmp": "bmp",
  "image/svg+xml": "svg",
  "image/tiff": "tiff",
  "image/x-icon": "ico",
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/flac": "flac",
  "audio/aac": "aac",
  "audio/mp4": "m4a",
  "audio/webm": "weba",
  "video/mp4": "mp4",
  "video/webm": "webm",
  "video/quicktime": "mov",
  "application/pdf": "pdf",
  "application/zip": "zip",
  "application/gzip": "gz",
  "application/json": "json",
  "application/xml": "xml",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
  "text/plain": "txt",
  "text/csv": "csv",
  "text/markdown": "md",
  "text/html": "html",
  "text/css": "css",
  "text/calendar": "ics",
  "text/xml": "xml"
}

/** Other extensions accepted as naming the same type (a `.jpeg` stays `.jpeg`). */
const aliases: Readonly<Record<string, ReadonlyArray<string>>> = {
  jpg: ["jpeg", "jpe"],
  tiff: ["tif"],
  html: ["htm"],
  md: ["markdown"],
  txt: ["text"]
}

export const extensionOf = (mimeType: string): string | undefined => extensions[essence(mimeType)]

/** Text types: file-type recognises none of them, so their bytes must be UTF-8 and recognised as nothing else. */
export const isTextType = (mimeType: string): boolean => {
  const type = essence(mimeType)
  return type.startsWith("text/") || type === "application/json" || type === "application/xml" ||
    type === "image/svg+xml" || type.endsWith("+json") || type.endsWith("+xml")
}

// Control characters (C0, DEL, C1), format and invisible characters (soft hyphen, Arabic letter mark, Hangul
// fillers, Mongolian vowel separator, zero-width, bidi controls, word joiner and invisible operators, variation
// selectors, BOM, specials, tag characters), separators other than the space, and lone surrogates.
const invisibleRanges: ReadonlyArray<readonly [number, number]> = [
  [0x0000, 0x001f], [0x007f, 0x009f], [0x00ad, 0x00ad], [0x061c, 0x061c], [0x115f, 0x1160], [0x180e, 0x180e],
  [0x200b, 0x200f], [0x2028, 0x202e], [0x2060, 0x206f], [0x3164, 0x3164], [0xd800, 0xdfff], [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff], [0xffa0, 0xffa0], [0xfff0, 0xfffb], [0xe0000, 0xe007f]
]
const isInvisible = (codePoint: number) => invisibleRanges.some(([from, to]) => codePoint >= from && codePoint <= to)
const withoutInvisible = (text: string) =>
  Array.from(text).filter((char) => !isInvisible(char.codePointAt(0) ?? 0)).join("")
const unsafe = /[<>:"|?*\\/]/g
// Windows device names refuse to be files on that system, whatever their extension.
const deviceNames = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])$/i

/**
 * The name a file is attached or exported under: never a path. Path parts go (only the last segment after any
 * `/` or `\` stays), then invisible and unsafe characters; spaces and dots are trimmed at both ends; the type's
 * extension is given when the name lacks it; the whole is cut to `maxNameLength` keeping that extension; when
 * nothing usable is left the name is `untitled` with the extension (untitled.png).
 */
export const sanitizeName = (raw: string | undefined, mimeType: string): string => {
  const extension = extensionOf(mimeType)
  const segments = (raw ?? "").normalize("NFC").split(/[/\\]/)
  let base = (segments[segments.length - 1] ?? "")
  base = withoutInvisible(base)
    .replace(unsafe, "")
    .replace(/\s+/g, " ")
    .replace(/^[\s.]+|[\s.]+$/g, "")
  const dot = base.lastIndexOf(".")
  const given = dot > 0 ? base.slice(dot + 1).toLowerCase() : undefined
  let stem = dot > 0 ? base.slice(0, dot) : base
  let suffix = given ?? ""
  if (extension !== undefined && given !== extension && !(aliases[extension] ?? []).includes(given ?? "")) {
    // The name's own extension (if any) stays part of the stem: `report.exe` as PNG is `report.exe.png`.
    stem = base
    suffix = extension
  }
  stem = stem.replace(/^[\s.]+|[\s.]+$/g, "")
  if (stem === "" || deviceNames.test(stem)) stem = stem === "" ? "untitled" : `${stem}_`
  const tail = suffix === "" ? "" : `.${suffix}`
  const room = Math.max(1, maxNameLength - tail.length)
  // Cut by code points so no surrogate pair is split.
  const cut = Array.from(stem).slice(0, room).join("").replace(/[\s.]+$/g, "")
  base = `${cut === "" ? "untitled" : cut}${tail}`
  return base
}

export type SniffVerdict = { readonly _tag: "Agrees" } | { readonly _tag: "Disagrees"; readonly found: string }

/**
 * Whether the bytes are what the declared type says. `detected` is file-type's reading of the first bytes
 * (undefined when it recognises nothing); `utf8` whether the whole file decodes as UTF-8.
 * - Bytes recognised as a type must be that type (application/octet-stream takes anything).
 * - A text type's bytes must be recognised as nothing and be UTF-8.
 * - A type file-type knows but did not find in the bytes disagrees (a PNG declared and not written).
 * - Any other type whose bytes are recognised as nothing cannot be checked further and agrees.
 */
export const sniff = (
  declared: string,
  detected: string | undefined,
  utf8: boolean,
  knownToSniffer: (mimeType: string) => boolean
): SniffVerdict => {
  const type = essence(declared)
  if (type === "application/octet-stream") return { _tag: "Agrees" }
  if (detected !== undefined) {
    const found = essence(detected)
    if (found === type || sameType(found, type)) return { _tag: "Agrees" }
    // XML-based formats are recognised by file-type only as `application/xml` sometimes.
    if (found === "application/xml" && isTextType(type) && type.endsWith("xml")) return { _tag: "Agrees" }
    return { _tag: "Disagrees", found }
  }
  if (isTextType(type)) return utf8 ? { _tag: "Agrees" } : { _tag: "Disagrees", found: "binary data" }
  if (knownToSniffer(type)) return { _tag: "Disagrees", found: "unrecognised bytes" }
  return { _tag: "Agrees" }
}

/** Names of one type that differ between the declared and the sniffed spelling. */
const synonyms: ReadonlyArray<ReadonlyArray<string>> = [
  ["audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"],
  ["audio/mp4", "audio/x-m4a", "audio/m4a"],
  ["audio/flac", "audio/x-flac"],
  ["image/x-icon", "image/vnd.microsoft.icon"],
  ["application/gzip", "application/x-gzip"],
  ["application/zip", "application/x-zip-compressed"],
  ["audio/aac", "audio/x-aac"]
]

const sameType = (a: string, b: string) => synonyms.some((group) => group.includes(a) && group.includes(b))

/**
 * Whether a picked file fits the widget's `accept` list (as in a file input's accept attribute): an entry is
 * an extension (`.png`), a type (`image/png`) or a family (`image/*`). No list accepts everything.
 */
export const accepts = (accept: ReadonlyArray<string> | undefined, name: string, mimeType: string): boolean => {
  if (accept === undefined || accept.length === 0) return true
  const type = essence(mimeType)
  const lower = name.toLowerCase()
  return accept.some((raw) => {
    const entry = raw.trim().toLowerCase()
    if (entry.startsWith(".")) return lower.endsWith(entry)
    if (entry.endsWith("/*")) return type.startsWith(entry.slice(0, -1))
    return essence(entry) === type
  })
}

/** Whether a grant that started at `writtenAt` (ISO) still holds at `nowMillis`. */
export const grantHolds = (writtenAt: string, nowMillis: number): boolean =>
  nowMillis < Date.parse(writtenAt) + grantMillis

/** The instant (ms) at which an unfinished file last written at `writtenAt` is removed. */
export const removalAt = (writtenAt: string): number => Date.parse(writtenAt) + grantMillis
