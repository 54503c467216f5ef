/**
 * `clark … --help`, written here rather than by @effect/cli. Its help (0.77)
 * repeats command paths in nested listings (`marketplace marketplace admin
 * user create`), prints usage as `$ status` without the program, lists every
 * built-in option on every page and pads each option with boilerplate ("A
 * true or false value.", "This setting is optional."). This one reads the
 * same command tree, names, descriptions, options and arguments, and prints
 * one line per command, `clark …` usage lines and each option's own
 * description. Built-in options other than --help and --version are left
 * out; they still work.
 */
import * as Args from "@effect/cli/Args"
import type * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Options from "@effect/cli/Options"

/** One command of the tree: what its help page shows. */
export interface CommandNode {
  readonly name: string
  readonly description: string
  readonly options: Options.Options<unknown>
  readonly args: Args.Args<unknown>
  readonly children: ReadonlyArray<CommandNode>
}

/**
 * The shape of @effect/cli's command descriptors (internal/commandDescriptor.ts,
 * pinned at 0.77.2): a command, a command mapped over, or a command with
 * subcommands. Read only here; test/cli/Help.test.ts checks every page.
 */
type Descriptor =
  | {
    readonly _tag: "Standard"
    readonly name: string
    readonly description: HelpDoc.HelpDoc
    readonly options: Options.Options<unknown>
    readonly args: Args.Args<unknown>
  }
  | { readonly _tag: "GetUserInput"; readonly name: string; readonly description: HelpDoc.HelpDoc }
  | { readonly _tag: "Map"; readonly command: Descriptor }
  | { readonly _tag: "Subcommands"; readonly parent: Descriptor; readonly children: ReadonlyArray<Descriptor> }

const toNode = (descriptor: Descriptor): CommandNode => {
  switch (descriptor._tag) {
    case "Standard":
      return { ...descriptor, description: docText(descriptor.description), children: [] }
    case "GetUserInput":
      return { name: descriptor.name, description: docText(descriptor.description), options: Options.none, args: Args.none, children: [] }
    case "Map":
      return toNode(descriptor.command)
    case "Subcommands":
      return { ...toNode(descriptor.parent), children: descriptor.children.map(toNode) }
  }
}

export const commandTree = <Name extends string, R, E, A>(command: Command.Command<Name, R, E, A>): CommandNode =>
  toNode(command.descriptor as unknown as Descriptor)

// ---------------------------------------------------------------------------
// HelpDoc to plain text

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Highlight":
    case "Weak":
    case "Strong":
      return spanText(span.value)
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
  }
}

const paragraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> => {
  switch (doc._tag) {
    case "Empty":
      return []
    case "Header":
    case "Paragraph":
      return [spanText(doc.value)]
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
    case "Enumeration":
      return doc.elements.flatMap(paragraphs)
    case "DescriptionList":
      return doc.definitions.flatMap(([span, block]) => [spanText(span), ...paragraphs(block)])
  }
}

const docText = (doc: HelpDoc.HelpDoc) => paragraphs(doc).join("\n\n")

/** The entries of a description list, wherever they sit in the document. */
const definitions = (doc: HelpDoc.HelpDoc): ReadonlyArray<readonly [string, HelpDoc.HelpDoc]> => {
  switch (doc._tag) {
    case "DescriptionList":
      return doc.definitions.map(([span, block]) => [spanText(span), block] as const)
    case "Sequence":
      return [...definitions(doc.left), ...definitions(doc.right)]
    default:
      return []
  }
}

/** Value placeholders in upper case: `--limit integer` reads `--limit N`. */
const placeholders: Record<string, string> = {
  text: "TEXT",
  integer: "N",
  redacted: "SECRET",
  directory: "DIR",
  file: "FILE",
  float: "NUMBER",
  date: "DATE"
}

/**
 * An option or argument as `[name, description]`. The block's first paragraph
 * is the value type, which the name shows already; "optional" and repetition
 * notes are what brackets and `...` say; a default is kept.
 */
const entry = ([name, block]: readonly [string, HelpDoc.HelpDoc]): readonly [string, string] => {
  const [, ...rest] = paragraphs(block)
  const notes = rest.flatMap((text) => {
    const fallback = /^This setting is optional\. Defaults to: (.*)$/.exec(text)
    if (fallback !== null) return [`(default: ${fallback[1]})`]
    return /^This (setting|option|argument) /.test(text) ? [] : [text]
  })
  const shown = name.replace(/^\((.*)\)$/, "$1").replace(/ (text|integer|redacted|directory|file|float|date)\b/g, (_, type: string) =>
    ` ${placeholders[type]}`
  )
  return [shown, notes.join(" ")]
}

const optionEntries = (node: CommandNode) => definitions(Options.getHelp(node.options)).map(entry)

/** Arguments as usage shows them: `NAME`, `[SLUG]` when optional, `PACKAGE...` when repeated. */
const argumentEntries = (node: CommandNode) =>
  definitions(Args.getHelp(node.args)).map(([name, block]) => {
    const texts = paragraphs(block)
    const optional = texts.some((text) => text.startsWith("This setting is optional") || text.includes("zero or more times"))
    const repeated = /\.\.\.$| \d+\+$/.test(name) || texts.some((text) => /may be repeated|must be repeated/.test(text))
    const bare = name.replace(/^<(.*?)>.*$/, "$1")
    const named = `${bare}${repeated ? "..." : ""}`
    const shown = optional ? `[${named}]` : named
    return [shown, entry([name, block])[1]] as const
  })

// ---------------------------------------------------------------------------
// Pages

const width = () => Math.min(Math.max(process.stdout.columns ?? 100, 60), 100)

/** Words wrapped to the page, every line after the first indented by `indent`. */
const wrap = (text: string, indent: number, first: number = indent) => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    const room = width() - (lines.length === 0 ? first : indent)
    if (line !== "" && line.length + 1 + word.length > room) {
      lines.push(line)
      line = word
    } else {
      line = line === "" ? word : `${line} ${word}`
    }
  }
  lines.push(line)
  return lines.join(`\n${" ".repeat(indent)}`)
}

/** Two columns; with `oneLine`, each description is shortened to the line (a listing of commands). */
const columns = (rows: ReadonlyArray<readonly [string, string]>, oneLine = false) => {
  // A listing keeps every command on one line; elsewhere a long name (an option's choices) takes a line of its own.
  const left = Math.min(Math.max(...rows.map(([name]) => name.length)), oneLine ? 40 : 26) + 2
  const room = width() - left - 2
  return rows.map(([name, description]) => {
    if (oneLine) return `  ${name.padEnd(left)}${summary(description, room)}`.trimEnd()
    return name.length + 2 > left
      ? `  ${name}\n${" ".repeat(left + 2)}${wrap(description, left + 2)}`
      : `  ${name.padEnd(left)}${wrap(description, left + 2)}`
  }).join("\n")
}

/**
 * What a listing shows of a description, on one line of `room` characters:
 * the first sentence, else its first clause, else without a closing
 * parenthesis, else cut.
 */
export const summary = (description: string, room: number) => {
  const sentence = (description.split("\n")[0] ?? "").split(/\.(?:\s|$)/)[0] ?? ""
  const clause = sentence.split("; ")[0] ?? sentence
  const bare = clause.replace(/ \([^)]*\)$/, "")
  return [sentence, clause, bare].find((text) => text.length <= room) ?? `${bare.slice(0, room - 1)}…`
}

/** Every command under `node` that runs something, by its path below `node`, with its summary. */
export const listing = (node: CommandNode): ReadonlyArray<readonly [string, string]> =>
  node.children.flatMap((child) => {
    const runs = child.children.length === 0 || !isGroup(child)
    const below = listing(child).map(([path, text]) => [`${child.name} ${path}`, text] as const)
    return runs ? [[child.name, child.description] as const, ...below] : below
  })

/** A command that only groups others: no options, no arguments of its own. */
const isGroup = (node: CommandNode) =>
  node.children.length > 0 && optionEntries(node).length === 0 && argumentEntries(node).length === 0

const helpOption: readonly [string, string] = ["-h, --help", "show this help"]

export const page = (path: ReadonlyArray<string>, node: CommandNode): string => {
  const command = path.join(" ")
  const args = argumentEntries(node)
  const options = optionEntries(node)
  const usage = [
    ...(isGroup(node) ? [] : [[command, options.length > 0 ? "[options]" : "", ...args.map(([name]) => name)]]),
    ...(node.children.length > 0 ? [[command, "<command>", "[options]"]] : [])
  ].map((parts) => `Usage: ${parts.filter((part) => part !== "").join(" ")}`)
  const sections = [
    usage.join("\n"),
    wrap(node.description, 0),
    ...(node.children.length > 0 ? [`Commands:\n${columns(listing(node), true)}`] : []),
    ...(args.length > 0 ? [`Arguments:\n${columns(args)}`] : []),
    `Options:\n${columns([...options, helpOption, ...(path.length === 1 ? [["--version", "print the version"] as const] : [])])}`,
    ...(node.children.length > 0 ? [`Run "${command} <command> --help" for a command's arguments and options.`] : [])
  ]
  return `${sections.filter((section) => section !== "").join("\n\n")}\n`
}

export type Requested =
  | { readonly _tag: "Help"; readonly page: string }
  | { readonly _tag: "UnknownCommand"; readonly message: string }

/**
 * What the arguments ask of the help, if anything: a page for `--help` or
 * `-h` anywhere before `--`, or for a command that only groups others given
 * nothing more; a refusal for a name that is none of a group's commands. The
 * page is that of the deepest command the leading names reach.
 */
export const requested = (root: CommandNode, args: ReadonlyArray<string>): Requested | undefined => {
  const end = args.indexOf("--")
  const given = end < 0 ? args : args.slice(0, end)
  const path = [root.name]
  let node = root
  let consumed = 0
  for (const arg of given) {
    const child = node.children.find((candidate) => candidate.name === arg)
    if (child === undefined) break
    node = child
    path.push(arg)
    consumed++
  }
  if (given.includes("--help") || given.includes("-h")) return { _tag: "Help", page: page(path, node) }
  if (!isGroup(node)) return undefined
  const next = given[consumed]
  if (next === undefined) return { _tag: "Help", page: page(path, node) }
  // An option (--version, --log-level, …) is @effect/cli's to answer.
  if (next.startsWith("-")) return undefined
  const command = path.join(" ")
  return {
    _tag: "UnknownCommand",
    message: `unknown_command: ${command} has no command ${next}; run "${command} --help" for the list`
  }
}
