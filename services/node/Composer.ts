/**
 * The composer's suggestions (GET /composer/suggestions) and the re-check of the references a message carries
 * (message rule 7). A reference is a pointer, never a permission: every one is resolved again on arrival, and
 * what reaches the model names files by their path inside an approved project folder, never an absolute path.
 * The rules that judge a path and rank a match are pure functions here (table-tested).
 */
import { Context, type Effect } from "effect"
import { createHash } from "node:crypto"
import * as path from "node:path"
import type { SuggestionList, SuggestionTrigger } from "../../schema/node/Composer.js"
import type { Ref } from "../../schema/node/Conversation.js"
import type { ReferenceNotAvailable } from "./ConversationErrors.js"

/** The person-only preference that lists the approved project folders (absolute paths). */
export const projectFoldersKey = "composer.projectFolders"

/** A project's id: stable for its folder, and never the folder's path. */
export const projectIdOf = (folder: string): string =>
  `prj_${createHash("sha256").update(folder).digest("hex").slice(0, 16)}`

/** What a reference becomes after its check: what is stored on the message and shown to the model. */
export type ResolvedRef = Ref & {
  readonly label: string
  /** Files and folders: the path inside the project, `/`-separated. */
  readonly path?: string
  /** A notice's own words, quoted as data. */
  readonly quoted?: string
}

/**
 * Why `relative` cannot name something inside a project, or undefined when it can be joined to the project's
 * folder lexically. Symbolic links are judged on disk afterwards (the real path must stay inside).
 */
export const pathProblem = (relative: string): string | undefined => {
  if (relative.length === 0) return "empty"
  if (relative.length > 1024) return "too-long"
  if (relative.includes("\0")) return "nul"
  // Separators and dots must arrive as themselves: an encoded one is never decoded into a path.
  if (/%(?:2f|5c|2e|00)/i.test(relative)) return "encoded"
  if (relative.includes("\\")) return "backslash"
  if (relative.startsWith("/") || path.isAbsolute(relative) || /^[A-Za-z]:/.test(relative)) return "absolute"
  const parts = relative.split("/")
  if (parts.some((part) => part === ".." || part === "." || part === "")) return "dot-segment"
  return undefined
}

/** Whether `target` (a real path) is `folder` itself or inside it. */
export const inside = (folder: string, target: string): boolean => {
  const relative = path.relative(folder, target)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

/**
 * How well a name matches the query, all three lower-case: 0 for a name starting with it, 1 for a name
 * containing it, 2 for a path containing it (or an empty query); -1 for no match.
 */
export const rank = (query: string, lowerName: string, lowerPath: string = lowerName): number =>
  query === ""
    ? 2
    : lowerName.startsWith(query)
    ? 0
    : lowerName.includes(query)
    ? 1
    : lowerPath !== lowerName && lowerPath.includes(query)
    ? 2
    : -1

export interface SuggestionQuery {
  readonly trigger: SuggestionTrigger
  readonly q: string
  readonly conversationId?: string | undefined
}

export class Composer extends Context.Tag("clark/node/Composer")<Composer, {
  readonly suggestions: (query: SuggestionQuery) => Effect.Effect<SuggestionList>
  /** Rule 7: each reference resolved again; the first that no longer resolves refuses the whole message. */
  readonly resolve: (refs: ReadonlyArray<Ref>) => Effect.Effect<ReadonlyArray<ResolvedRef>, ReferenceNotAvailable>
}>() {}
