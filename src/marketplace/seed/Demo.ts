/**
 * The demo catalogue: a realistic-looking marketplace (about 160 packages, publishers,
 * collections and pages) in the import format of `clark marketplace admin import`.
 *
 * Pure and deterministic: the text comes from the tables below and every random choice
 * from a seeded PRNG, so `demoCatalog(now)` always returns the same catalogue, with all
 * dates placed before `now`.
 */
import type { ImportDocumentInput } from "../../../schema/marketplace/Import.js"
import {
  type ImportCategoryInput,
  type ImportPackageInput,
  type ImportPublisherInput,
  type ImportVersionInput,
  mixSeed,
  mulberry32,
  type Rng
} from "./Synthetic.js"

type CollectionInput = NonNullable<ImportDocumentInput["collections"]>[number]

const demoSeed = 20261101

import { type Kind, kindSpecs, publisherBySlug, publishers, type PublisherSpec } from "./demo/Catalogue.js"
import { categories, type CategorySpec, genericBenefits, type Topic } from "./demo/Categories.js"
import { aboutPage, installPage, privacyPage, roadmapPage, termsPage } from "./demo/Pages.js"
import { curationFor, hashString, type PackageContext, versionsFor } from "./demo/Versions.js"

// ---------------------------------------------------------------------------
// Packages
// ---------------------------------------------------------------------------

const licenses = ["MIT", "MIT", "MIT", "Apache-2.0", "Apache-2.0", "ISC", "BSD-3-Clause", "MPL-2.0", "GPL-3.0-only"]

/** Skills talk rather than show, so the category's UI-flavoured endings do not fit them. */
const skillBenefits = [
  "in plain language",
  "and cites where every answer came from",
  "in your own tone of voice",
  "without leaving the conversation"
]

const describe = (rng: Rng, kind: Kind, topic: Topic, category: CategorySpec): string => {
  const opening = rng.pick(kindSpecs[kind].describe)(topic.object)
  const benefits = kind === "theme"
    ? category.benefits
    : kind === "skill"
    ? skillBenefits
    : [...category.benefits, ...genericBenefits]
  return `${opening} ${rng.pick(benefits)}.`
}

const keywordsFor = (rng: Rng, kind: Kind, topic: Topic, category: CategorySpec): Array<string> => {
  const words = new Set<string>(topic.word.split("-").filter((w) => w.length > 2))
  words.add(rng.pick(category.keywords))
  if (rng.chance(0.5)) words.add(rng.pick(category.keywords))
  if (kind !== "theme" && rng.chance(0.6)) words.add(kind)
  // Keep 2-6: a one-word topic with one category keyword gets the category slug too.
  if (words.size < 2) words.add(category.slug)
  return [...words].slice(0, 6)
}

const buildPackage = (now: Date, category: CategorySpec, topic: Topic, index: number): ImportPackageInput => {
  const rng = mulberry32(mixSeed(demoSeed, hashString(topic.word)))
  const kind = topic.kind ?? rng.pick(category.kinds)
  const spec = kindSpecs[kind]
  const [suffix, suffixLabel] = topic.kind !== undefined ? (spec.suffixes[0] as readonly [string, string]) : rng.pick(spec.suffixes)
  const publisher = publisherBySlug.get(topic.publisher ?? rng.pick(category.publishers)) as PublisherSpec
  const base = `${topic.word}-${suffix}`
  // Scoped publishers still release some packages under bare names, as on npm.
  const scoped = publisher.scope !== undefined && (topic.publisher !== undefined || rng.chance(0.6))
  const name = scoped ? `@${publisher.scope}/${base}` : base
  const displayName = `${topic.label} ${suffixLabel}`
  const description = describe(rng, kind, topic, category)
  const status = curationFor(index)
  const openSource = rng.chance(0.9)
  const repositoryUrl = openSource ? `https://github.com/${publisher.github}/${base}` : null
  const ctx: PackageContext = { rng, name, displayName, description, kind, category, topic, status, repositoryUrl }
  const versions = versionsFor(ctx, now, name.replace("@", "").replace("/", "-"))
  return {
    name,
    displayName,
    description,
    publisher: publisher.slug,
    categorySlug: category.slug,
    curationStatus: status,
    keywords: keywordsFor(rng, kind, topic, category),
    homepage: rng.chance(0.85) ? `https://${publisher.domain}/${base}` : null,
    repositoryUrl,
    license: openSource ? rng.pick(licenses) : null,
    updatedAt: (versions[versions.length - 1] as ImportVersionInput).indexedAt,
    versions
  }
}

const buildPackages = (now: Date): Array<ImportPackageInput> => {
  const out: Array<ImportPackageInput> = []
  const seen = new Set<string>()
  for (const category of categories) {
    for (const topic of category.topics) {
      const pkg = buildPackage(now, category, topic, out.length)
      // Topic words are unique, so names are too; fail loudly if a table edit breaks that.
      if (seen.has(pkg.name)) throw new Error(`demo catalogue: duplicate package name ${pkg.name}`)
      seen.add(pkg.name)
      out.push(pkg)
    }
  }
  return out
}

// ---------------------------------------------------------------------------
// Collections
// ---------------------------------------------------------------------------

const isPublic = (pkg: ImportPackageInput): boolean => pkg.curationStatus === "listed" || pkg.curationStatus === "featured"

const buildCollections = (packages: ReadonlyArray<ImportPackageInput>): Array<CollectionInput> => {
  const featured = packages.filter((p) => p.curationStatus === "featured")
  const hidden = packages.find((p) => p.curationStatus === "hidden")
  const outdoors = packages.filter((p) => isPublic(p) && /\b(map|weather|trail|hiking)\b/.test(p.description ?? ""))
  const focus = packages.filter((p) =>
    isPublic(p) && (p.categorySlug === "productivity" || p.categorySlug === "writing") && p.name.includes("widget")
  )
  const themes = packages.filter((p) => p.categorySlug === "themes")

  const pickNotes = [
    "Our favourite way to start the morning.",
    "Small, fast and beautifully made.",
    "The one the whole team ended up installing.",
    null,
    "A great first package if you are new to Clark.",
    null,
    "Quietly excellent."
  ]
  const editorsPicks = [
    ...featured.slice(0, 7).map((p, i) => ({ packageName: p.name, note: pickNotes[i] ?? null })),
    // Curators keep hidden packages in collections while they are being fixed; the public
    // collection view must leave them out.
    ...(hidden === undefined ? [] : [{ packageName: hidden.name, note: "Hidden until the maintainer ships the sync fix." }])
  ]

  return [
    {
      slug: "editors-picks",
      title: "Editors' picks",
      description: "Packages the curation team keeps coming back to.",
      published: true,
      position: 0,
      items: editorsPicks
    },
    {
      slug: "maps-weather-and-outdoors",
      title: "Maps, weather and the outdoors",
      description: "Plan the route, check the sky, find the trail.",
      published: true,
      position: 1,
      items: outdoors.slice(0, 6).map((p, i) => ({ packageName: p.name, note: i === 0 ? "Our pick for planning a weekend outside." : null }))
    },
    {
      slug: "focus-and-flow",
      title: "Focus and flow",
      description: "Widgets that help you do one thing at a time.",
      published: true,
      position: 2,
      items: focus.slice(0, 6).map((p) => ({ packageName: p.name }))
    },
    {
      slug: "cosy-winter-themes",
      title: "Cosy themes for winter evenings",
      description: "Warm palettes for long dark afternoons. Draft: waiting on two more submissions.",
      published: false,
      position: 3,
      items: themes.slice(0, 5).map((p, i) => ({ packageName: p.name, note: i === 0 ? "Lead image for the banner." : null }))
    }
  ]
}

// The catalogue
// ---------------------------------------------------------------------------

export const demoCatalog = (now: Date): ImportDocumentInput => {
  const packages = buildPackages(now)
  const featuredNames = packages.filter((p) => p.curationStatus === "featured").map((p) => p.name)
  const categoryInputs: Array<ImportCategoryInput> = categories.map((c, position) => ({
    slug: c.slug,
    name: c.name,
    description: c.description,
    position
  }))
  const publisherInputs: Array<ImportPublisherInput> = publishers.map((p) => ({ slug: p.slug, name: p.name, verified: p.verified }))
  return {
    categories: categoryInputs,
    publishers: publisherInputs,
    packages,
    collections: buildCollections(packages),
    pages: [aboutPage(now, featuredNames), termsPage(now), installPage(now), roadmapPage(now), privacyPage(now)]
  }
}
