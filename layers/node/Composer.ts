/**
 * Composer over the node's stores: skills and services of installed packages, the approved project folders (a
 * person-only preference) with the files and folders inside them (ProjectIndex.ts), conversations, background
 * work and inbox notices. Suggestions are at most eight rows, interleaved across kinds; references are resolved
 * again on arrival, files on the disk (real paths, so a symbolic link out of the folder is refused).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { maxSuggestions, type Suggestion } from "../../schema/node/Composer.js"
import type { Ref } from "../../schema/node/Conversation.js"
import { Activity } from "../../services/node/Activity.js"
import {
  Composer,
  inside,
  pathProblem,
  projectFoldersKey,
  projectIdOf,
  rank,
  type ResolvedRef
} from "../../services/node/Composer.js"
import { ReferenceNotAvailable } from "../../services/node/ConversationErrors.js"
import { ConversationStore } from "../../services/node/ConversationStore.js"
import { type InstalledPackage, PackageRecords } from "../../services/node/PackageRecords.js"
import { PreferenceStore } from "../../services/node/PreferenceStore.js"
import * as ProjectIndex from "./composer/ProjectIndex.js"

export const ProjectFolders = Schema.Array(Schema.String)

/** A notice's words as the model reads them: cut here, whatever the notice holds. */
const maxQuoted = 2_000

interface Candidate {
  readonly rank: number
  readonly row: Suggestion
}

/**
 * At most `limit` rows: the best rank first; among equal ranks, the kind offered least so far, then the kind's
 * order, so a large project does not crowd out every other kind.
 */
export const interleave = (groups: ReadonlyArray<ReadonlyArray<Candidate>>, limit: number): Array<Suggestion> => {
  const heads = groups.map(() => 0)
  const taken = groups.map(() => 0)
  const rows: Array<Suggestion> = []
  while (rows.length < limit) {
    let chosen = -1
    for (let g = 0; g < groups.length; g++) {
      const head = groups[g]![heads[g]!]
      if (head === undefined) continue
      const best = chosen < 0 ? undefined : groups[chosen]![heads[chosen]!]!
      if (best === undefined || head.rank < best.rank || (head.rank === best.rank && taken[g]! < taken[chosen]!)) chosen = g
    }
    if (chosen < 0) break
    rows.push(groups[chosen]![heads[chosen]!]!.row)
    heads[chosen]!++
    taken[chosen]!++
  }
  return rows
}

const byRank = (candidates: Array<Candidate>) =>
  candidates.filter((c) => c.rank >= 0).sort((a, b) => a.rank - b.rank || a.row.label.localeCompare(b.row.label))

const isFolder = (target: string) =>
  Effect.promise(() => fs.stat(target).then((s) => s.isDirectory(), () => false))

const realPath = (target: string) =>
  Effect.promise(() => fs.realpath(target).then((real) => Option.some(real), () => Option.none<string>()))

const offersService = (pkg: InstalledPackage) => pkg.manifest.facets.some((facet) => facet.kind === "service")

export const make = (options: ProjectIndex.Options = ProjectIndex.defaults) =>
  Effect.gen(function*() {
    const preferences = yield* PreferenceStore
    const packages = yield* PackageRecords
    const store = yield* ConversationStore
    const activity = yield* Activity
    const sql = yield* SqlClient.SqlClient
    const index = yield* ProjectIndex.make(options)

    const approvedFolders = Effect.map(preferences.get(projectFoldersKey), (state) =>
      Option.getOrElse(
        Option.flatMap(state, (s) => Schema.decodeUnknownOption(ProjectFolders)(s.value)),
        () => [] as ReadonlyArray<string>
      ))

    const skills = (q: string) =>
      Effect.map(packages.installed, (installed) =>
        byRank(installed.flatMap((pkg) =>
          pkg.manifest.skills.map((skill): Candidate => ({
            rank: rank(q, skill.name.toLowerCase(), `${pkg.packageId}#${skill.id}`.toLowerCase()),
            row: {
              kind: "skill",
              label: skill.name,
              detail: pkg.packageId,
              ref: { kind: "skill", id: `${pkg.packageId}#${skill.id}`, label: skill.name, digest: pkg.contentDigest }
            }
          }))
        )))

    const projects = (q: string, folders: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const rows: Array<Candidate> = []
        const entries: Array<Candidate> = []
        for (const folder of folders) {
          const projectId = projectIdOf(folder)
          const label = path.basename(folder)
          const present = yield* isFolder(folder)
          rows.push({
            rank: rank(q, label.toLowerCase()),
            row: present
              ? { kind: "project", label, ref: { kind: "project", id: projectId, label } }
              : { kind: "project", label, disabledReason: "The folder is no longer on this computer" }
          })
          if (!present) continue
          const kept = yield* index.get(folder)
          for (const { entry, rank: r } of ProjectIndex.search(kept, q, maxSuggestions)) {
            const kind = entry.folder ? "folder" as const : "file" as const
            entries.push({
              rank: r,
              row: { kind, label: entry.path, detail: label, ref: { kind, id: `${projectId}/${entry.path}`, label: entry.path } }
            })
          }
        }
        yield* index.retain(folders)
        return [byRank(rows), entries.sort((a, b) => a.rank - b.rank || a.row.label.length - b.row.label.length)] as const
      })

    const services = (q: string) =>
      Effect.map(packages.installed, (installed) =>
        byRank(installed.filter(offersService).map((pkg): Candidate => ({
          rank: rank(q, pkg.packageId.toLowerCase()),
          row: { kind: "mcp-service", label: pkg.packageId, ref: { kind: "mcp-service", id: pkg.packageId, label: pkg.packageId } }
        }))))

    const conversations = (q: string, current: string | undefined) =>
      Effect.map(store.list, (list) =>
        byRank(list.filter((c) => c.conversationId !== current).slice(0, 200).map((c): Candidate => {
          const label = c.title ?? "Untitled conversation"
          return {
            rank: rank(q, label.toLowerCase()),
            row: { kind: "conversation", label, ref: { kind: "conversation", id: c.conversationId, label } }
          }
        })))

    const work = (q: string) =>
      Effect.map(activity.work({ limit: 50 }), (items) =>
        byRank(items.map((item): Candidate => ({
          rank: rank(q, item.title.toLowerCase()),
          row: {
            kind: "work",
            label: item.title,
            detail: item.status,
            ref: { kind: "work", id: item.workId, label: item.title }
          }
        }))))

    const unavailable = (reference: Ref) => new ReferenceNotAvailable({ reference })

    /** A file or folder inside an approved project, by its real path. */
    const resolveEntry = (ref: Ref, folders: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const slash = ref.id.indexOf("/")
        const projectId = slash < 0 ? ref.id : ref.id.slice(0, slash)
        const relative = slash < 0 ? "" : ref.id.slice(slash + 1)
        const folder = folders.find((f) => projectIdOf(f) === projectId)
        if (folder === undefined || pathProblem(relative) !== undefined) return yield* unavailable(ref)
        const root = yield* realPath(folder)
        const target = yield* realPath(path.join(folder, ...relative.split("/")))
        if (Option.isNone(root) || Option.isNone(target) || !inside(root.value, target.value)) return yield* unavailable(ref)
        const stat = yield* Effect.promise(() => fs.stat(target.value).then((s) => s, () => undefined))
        const fits = ref.kind === "folder" ? stat?.isDirectory() === true : stat?.isFile() === true
        if (!fits) return yield* unavailable(ref)
        return { kind: ref.kind, id: ref.id, label: relative, path: relative } satisfies ResolvedRef
      })

    const resolveOne = (ref: Ref, folders: ReadonlyArray<string>): Effect.Effect<ResolvedRef, ReferenceNotAvailable> =>
      Effect.gen(function*() {
        switch (ref.kind) {
          case "skill": {
            const hash = ref.id.lastIndexOf("#")
            const pkg = hash < 0 ? Option.none() : yield* packages.installedOne(ref.id.slice(0, hash))
            const skill = Option.flatMap(pkg, (p) =>
              Option.fromNullable(p.manifest.skills.find((s) => s.id === ref.id.slice(hash + 1))))
            // Edited: the package was installed again with other files since the ref was offered.
            if (Option.isNone(skill) || Option.isNone(pkg) || ref.digest !== pkg.value.contentDigest) {
              return yield* unavailable(ref)
            }
            return { kind: "skill", id: ref.id, label: skill.value.name }
          }
          case "project": {
            const folder = folders.find((f) => projectIdOf(f) === ref.id)
            if (folder === undefined || !(yield* isFolder(folder))) return yield* unavailable(ref)
            return { kind: "project", id: ref.id, label: path.basename(folder) }
          }
          case "file":
          case "folder":
            return yield* resolveEntry(ref, folders)
          case "mcp-service": {
            const pkg = yield* packages.installedOne(ref.id)
            if (Option.isNone(pkg) || !offersService(pkg.value)) return yield* unavailable(ref)
            return { kind: "mcp-service", id: ref.id, label: ref.id }
          }
          case "conversation": {
            const found = yield* store.get(ref.id)
            if (Option.isNone(found)) return yield* unavailable(ref)
            return { kind: "conversation", id: ref.id, label: found.value.title ?? "Untitled conversation" }
          }
          case "work": {
            const rows = yield* sql`SELECT 1 AS found FROM messages WHERE task_id = ${ref.id} LIMIT 1`.pipe(Effect.orDie)
            if (rows.length === 0) return yield* unavailable(ref)
            return { kind: "work", id: ref.id, label: typeof ref.label === "string" ? ref.label.slice(0, 200) : ref.id }
          }
          case "notice": {
            const [row] = yield* sql<{ kind: string; data: string; state: string }>`SELECT kind, data, state FROM notices
              WHERE id = ${ref.id}`.pipe(Effect.orDie)
            if (row === undefined || row.state === "dismissed") return yield* unavailable(ref)
            const { actions: _actions, ...words } = JSON.parse(row.data) as Record<string, unknown>
            return {
              kind: "notice",
              id: ref.id,
              label: row.kind,
              quoted: JSON.stringify({ kind: row.kind, ...words }).slice(0, maxQuoted)
            }
          }
        }
      })

    return Composer.of({
      suggestions: ({ conversationId, q, trigger }) =>
        Effect.gen(function*() {
          const query = q.trim().toLowerCase()
          if (trigger === "/") {
            return { trigger, query: q, suggestions: interleave([yield* skills(query)], maxSuggestions) }
          }
          const folders = yield* approvedFolders
          const [[projectRows, entryRows], serviceRows, conversationRows, workRows] = yield* Effect.all([
            projects(query, folders),
            services(query),
            conversations(query, conversationId),
            work(query)
          ])
          const groups = [projectRows, entryRows, serviceRows, conversationRows, workRows]
          return { trigger, query: q, suggestions: interleave(groups, maxSuggestions) }
        }),
      resolve: (refs) =>
        refs.length === 0
          ? Effect.succeed([])
          : Effect.flatMap(approvedFolders, (folders) => Effect.forEach(refs, (ref) => resolveOne(ref, folders)))
    })
  })

export const layer = (options?: ProjectIndex.Options) => Layer.effect(Composer, make(options))
