/**
 * The media content policy as pure functions: the `CC_MEDIA_ORIGINS` list,
 * the checks on a source URL and on each redirect, the classification of a
 * dialled address, and what the declared type and the bytes must agree on.
 */
import { Config, Duration, Either } from "effect"
import ipaddr from "ipaddr.js"
import * as net from "node:net"
import { maxArtifactBytes } from "../../../schema/node/Artifact.js"
import { mediaRefused, type MediaRefused } from "../../../services/node/MediaFetcher.js"

// ---------------------------------------------------------------------------
// Limits (the spec's "Media" row)

export const maxOrigins = 32
export const maxMediaBytes = maxArtifactBytes
export const maxDurationSeconds = 3600
export const fetchTimeout = Duration.seconds(30)
export const maxRedirects = 3
/** Not in the spec: a longer URL is refused as `source` before anything else is looked at. */
export const maxUrlLength = 2048

// ---------------------------------------------------------------------------
// CC_MEDIA_ORIGINS

/** The parsed setting: the allowed origins (normalized), or why the list was ignored. */
export type MediaOrigins =
  | { readonly _tag: "Allowed"; readonly origins: ReadonlyArray<string> }
  | { readonly _tag: "Ignored"; readonly reason: string }

const dnsLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/
const decimalOctet = /^(?:0|[1-9][0-9]{0,2})$/
const portPattern = /^[1-9][0-9]{0,4}$/
const bareOrigin = /^https:\/\/(\[[0-9a-f:.]+\]|[^/?#@:[\]\s]+)(?::([^/?#@]*))?$/

const isDnsName = (host: string) =>
  host.length <= 253 && host.split(".").every((label) => dnsLabel.test(label)) && !/^[0-9.]+$/.test(host)

/** Dotted decimal only: `0177.0.0.1`, `0x7f.1`, `2130706433` are other spellings, refused in the list. */
const isDottedDecimal = (host: string) => {
  const parts = host.split(".")
  return parts.length === 4 && parts.every((part) => decimalOctet.test(part) && Number(part) <= 255)
}

/**
 * One entry: exactly `https://host[:port]` with a DNS name, a dotted-decimal
 * IPv4 address or a bracketed IPv6 address. Returns the origin as `URL`
 * serializes it (lowercase, default port dropped, IPv6 compressed).
 */
export const parseOrigin = (entry: string): Either.Either<string, string> => {
  const lower = entry.toLowerCase()
  const match = bareOrigin.exec(lower)
  if (match === null) return Either.left("not of the form https://host[:port]")
  const host = match[1]!
  const port = match[2]
  if (port !== undefined && !(portPattern.test(port) && Number(port) <= 65535)) {
    return Either.left("the port is not a number from 1 to 65535")
  }
  let url: URL
  try {
    url = new URL(lower)
  } catch {
    return Either.left("not a URL")
  }
  const hostValid = host.startsWith("[")
    ? ipaddr.IPv6.isValid(host.slice(1, -1))
    // URL reads `0x7f.1`, `0177.0.0.1` or `2130706433` as IPv4 and rewrites the
    // host: only a host that URL keeps as written is accepted.
    : url.hostname === host && (isDottedDecimal(host) || isDnsName(host))
  if (!hostValid) return Either.left("the host is not a DNS name, a dotted IPv4 address or a bracketed IPv6 address")
  return Either.right(url.origin)
}

/**
 * The whole list. An empty setting allows nothing. One invalid or empty
 * entry, or more than 32 entries, ignores the whole list. The reason names
 * the entry by position only: an entry may hold a credential by mistake.
 */
export const parseMediaOrigins = (raw: string): MediaOrigins => {
  if (raw.trim() === "") return { _tag: "Allowed", origins: [] }
  const entries = raw.split(",").map((entry) => entry.trim())
  if (entries.length > maxOrigins) {
    return { _tag: "Ignored", reason: `${entries.length} entries, more than ${maxOrigins}` }
  }
  const origins: Array<string> = []
  for (const [index, entry] of entries.entries()) {
    const parsed = parseOrigin(entry)
    if (Either.isLeft(parsed)) {
      return { _tag: "Ignored", reason: `entry ${index + 1} of ${entries.length}: ${parsed.left}` }
    }
    if (!origins.includes(parsed.right)) origins.push(parsed.right)
  }
  return { _tag: "Allowed", origins }
}

/** `CC_MEDIA_ORIGINS`, empty by default. */
export const MediaOriginsConfig: Config.Config<MediaOrigins> = Config.string("CC_MEDIA_ORIGINS").pipe(
  Config.withDefault(""),
  Config.map(parseMediaOrigins)
)

export const allowedOrigins = (setting: MediaOrigins): ReadonlyArray<string> =>
  setting._tag === "Allowed" ? setting.origins : []

// ---------------------------------------------------------------------------
// Source URL and redirects

const credentialsOf = (url: URL) => url.username !== "" || url.password !== ""

/** The first URL: its shape, then https, credentials, the allowed origins (in that order). */
export const checkSourceUrl = (raw: string, allowed: ReadonlySet<string>): Either.Either<URL, MediaRefused> => {
  if (raw.length > maxUrlLength) {
    return Either.left(mediaRefused("source", `The source URL is longer than ${maxUrlLength} characters`))
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left(mediaRefused("source", "The source is not a URL"))
  }
  if (url.protocol !== "https:") return Either.left(mediaRefused("https-only", "Media is fetched over https only"))
  if (credentialsOf(url)) {
    return Either.left(mediaRefused("credentials-in-url", "The source URL carries a user name or password"))
  }
  if (!allowed.has(url.origin)) {
    return Either.left(mediaRefused("origin-not-allowed", `The origin ${url.origin} is not in CC_MEDIA_ORIGINS`))
  }
  url.hash = ""
  return Either.right(url)
}

/** A `Location` answered by `from`: https, no credentials, the same origin. The count is checked by the caller. */
export const checkRedirect = (location: string, from: URL): Either.Either<URL, MediaRefused> => {
  let url: URL
  try {
    url = new URL(location, from)
  } catch {
    return Either.left(mediaRefused("fetch-failed", "The server answered a redirect without a valid location"))
  }
  if (url.protocol !== "https:") {
    return Either.left(mediaRefused("https-only", "The server redirected to a URL that is not https"))
  }
  if (credentialsOf(url)) {
    return Either.left(mediaRefused("credentials-in-url", "The server redirected to a URL with a user name or password"))
  }
  if (url.origin !== from.origin) {
    return Either.left(mediaRefused("redirect-off-origin", `The server redirected away from ${from.origin}`))
  }
  url.hash = ""
  return Either.right(url)
}

// ---------------------------------------------------------------------------
// Addresses

/**
 * What `localhost` names: the loopback addresses, never asked of DNS. (An
 * origin written as an address names that address and is dialled as written;
 * any other name is resolved and every answer must be a public address.)
 */
export const localhostAddresses: ReadonlyArray<{ readonly address: string; readonly family: 4 | 6 }> = [
  { address: "127.0.0.1", family: 4 },
  { address: "::1", family: 6 }
]

/**
 * The ipaddr.js range of an address a name resolved to, IPv4-mapped IPv6
 * unwrapped first; `invalid` when it is not an IP address at all. Only
 * `unicast` (public) may be dialled: loopback, private, link-local,
 * unique-local, multicast, unspecified, broadcast, carrier-grade NAT,
 * reserved, benchmarking, documentation and the IPv6 transition prefixes
 * (NAT64, 6to4, Teredo, which can embed any IPv4 address) are all refused.
 */
export const addressRange = (address: string): string => {
  if (net.isIP(address) === 0) return "invalid"
  try {
    return ipaddr.process(address).range()
  } catch {
    return "invalid"
  }
}

export const isPublicAddress = (address: string): boolean => addressRange(address) === "unicast"

// ---------------------------------------------------------------------------
// Types

export const audioTypes = ["audio/mpeg", "audio/ogg", "audio/wav", "audio/webm"] as const
export type AudioType = typeof audioTypes[number]

/** The media type of a Content-Type header: lowercased, parameters dropped. */
export const mediaTypeOf = (header: string | undefined): string | undefined =>
  header?.split(";")[0]?.trim().toLowerCase()

export const isAudioType = (type: string | undefined): type is AudioType =>
  type !== undefined && (audioTypes as ReadonlyArray<string>).includes(type)

/** The file-type extensions each declared type accepts (its container, as sniffed). */
const containers: Record<AudioType, ReadonlyArray<string>> = {
  "audio/mpeg": ["mp3"],
  "audio/ogg": ["ogg", "opus", "oga"],
  "audio/wav": ["wav"],
  "audio/webm": ["webm"]
}

export const containerAgrees = (declared: AudioType, sniffedExtension: string | undefined): boolean =>
  sniffedExtension !== undefined && containers[declared].includes(sniffedExtension)

/** Content-Encoding and Transfer-Encoding values that do not compress. */
export const isIdentityEncoding = (contentEncoding: string | undefined, transferEncoding: string | undefined) =>
  (contentEncoding === undefined || contentEncoding.trim().toLowerCase() === "identity" ||
    contentEncoding.trim() === "") &&
  (transferEncoding === undefined ||
    transferEncoding.split(",").every((coding) => ["chunked", "identity"].includes(coding.trim().toLowerCase())))

/** A file name for the artifact: the last path segment, without control characters or separators. */
export const artifactName = (url: URL, declared: AudioType): string => {
  const segment = url.pathname.split("/").pop() ?? ""
  let name: string
  try {
    name = decodeURIComponent(segment)
  } catch {
    name = segment
  }
  // eslint-disable-next-line no-control-regex
  name = name.replace(/[\u0000-\u001f\u007f-\u009f/\\]/g, "_").trim().slice(0, 255)
  return name === "" || name === "." || name === ".." ? `audio.${declared.slice("audio/".length)}` : name
}
