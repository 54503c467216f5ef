/**
 * Table export as pure functions (spec, widget route POST /export; docs/decisions.md, "Table export"): a table
 * widget's dataset is its instance's props (`props.table`, placed by the assistant), never the request. Sort,
 * query and filters choose rows over every shown column; `columns` only picks which shown columns the file
 * carries. A text cell a spreadsheet would run as a formula gets an apostrophe in front.
 */
import { Either, Schema } from "effect"
import type { ExportRequest } from "../../schema/node/Widget.js"

export const Cell = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)
export type Cell = typeof Cell.Type

/** `props.table` of a table widget: its columns (hidden ones are neither searched nor exported) and rows. */
export const TableDataset = Schema.Struct({
  columns: Schema.Array(Schema.Struct({
    key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
    label: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
    hidden: Schema.optional(Schema.Boolean)
  })).pipe(Schema.minItems(1), Schema.maxItems(200)),
  rows: Schema.Array(Schema.Record({ key: Schema.String, value: Cell })).pipe(Schema.maxItems(100_000))
})
export type TableDataset = typeof TableDataset.Type

export type ExportProblem =
  | { readonly _tag: "NoTable" }
  | { readonly _tag: "UnknownColumn"; readonly column: string; readonly field: "sort" | "filters" | "columns" }

/** The dataset a widget's props hold, or none (a widget that is not a table). */
export const datasetOf = (props: unknown): Either.Either<TableDataset, ExportProblem> => {
  const table = typeof props === "object" && props !== null ? (props as Record<string, unknown>).table : undefined
  return Either.mapLeft(Schema.decodeUnknownEither(TableDataset)(table), () => ({ _tag: "NoTable" }) as const)
}

const text = (cell: Cell | undefined): string => (cell === null || cell === undefined ? "" : String(cell))

const compare = (a: Cell | undefined, b: Cell | undefined): number => {
  if (typeof a === "number" && typeof b === "number") return a - b
  const empty = (x: Cell | undefined) => x === null || x === undefined
  if (empty(a) || empty(b)) return empty(a) === empty(b) ? 0 : empty(a) ? 1 : -1
  return text(a).localeCompare(text(b), "en", { numeric: true })
}

type Filter = NonNullable<ExportRequest["filters"]>[number]

const matches = (cell: Cell | undefined, filter: Filter): boolean => {
  switch (filter.op) {
    case "eq":
      return typeof filter.value === "string" ? text(cell) === filter.value : (cell ?? null) === filter.value
    case "neq":
      return typeof filter.value === "string" ? text(cell) !== filter.value : (cell ?? null) !== filter.value
    case "contains":
      return text(cell).toLowerCase().includes(text(filter.value).toLowerCase())
    case "lt":
      return filter.value !== null && cell !== null && cell !== undefined && compare(cell, filter.value) < 0
    case "lte":
      return filter.value !== null && cell !== null && cell !== undefined && compare(cell, filter.value) <= 0
    case "gt":
      return filter.value !== null && cell !== null && cell !== undefined && compare(cell, filter.value) > 0
    case "gte":
      return filter.value !== null && cell !== null && cell !== undefined && compare(cell, filter.value) >= 0
  }
}

/** The file's rows: header (labels), then the chosen rows in order, only the picked columns. */
export const exportRows = (
  dataset: TableDataset,
  request: ExportRequest
): Either.Either<{ readonly header: ReadonlyArray<string>; readonly rows: ReadonlyArray<ReadonlyArray<Cell>> }, ExportProblem> => {
  const shown = dataset.columns.filter((column) => column.hidden !== true)
  const known = new Set(shown.map((column) => column.key))
  const unknown = (field: "sort" | "filters" | "columns", names: ReadonlyArray<string>) => {
    const column = names.find((name) => !known.has(name))
    return column === undefined ? undefined : ({ _tag: "UnknownColumn", column, field } as const)
  }
  const problem = unknown("sort", (request.sort ?? []).map((s) => s.column)) ??
    unknown("filters", (request.filters ?? []).map((f) => f.column)) ??
    unknown("columns", request.columns ?? [])
  if (problem !== undefined) return Either.left(problem)
  const query = (request.query ?? "").trim().toLowerCase()
  const chosen = dataset.rows
    .filter((row) => query === "" || shown.some((column) => text(row[column.key]).toLowerCase().includes(query)))
    .filter((row) => (request.filters ?? []).every((filter) => matches(row[filter.column], filter)))
  // Array.prototype.sort is stable: rows equal on every key keep the dataset's order.
  const sorted = [...chosen].sort((a, b) => {
    for (const { column, direction } of request.sort ?? []) {
      const order = compare(a[column], b[column])
      if (order !== 0) return direction === "asc" ? order : -order
    }
    return 0
  })
  const picked = request.columns === undefined || request.columns.length === 0
    ? shown
    : request.columns.map((key) => shown.find((column) => column.key === key)!)
  return Either.right({
    header: picked.map((column) => column.label ?? column.key),
    rows: sorted.map((row) => picked.map((column) => row[column.key] ?? null))
  })
}

/** Characters that make a spreadsheet read a text cell as a formula (OWASP CSV injection). */
const formulaStart = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/

/** One CSV field (RFC 4180): formula-like text gets an apostrophe, then quoting where needed. */
export const csvField = (cell: Cell | undefined): string => {
  if (cell === null || cell === undefined) return ""
  const raw = typeof cell === "string" ? (formulaStart.test(cell) ? `'${cell}` : cell) : String(cell)
  return /[",\r\n]|^\s|\s$/.test(raw) ? `"${raw.replace(/"/g, "\"\"")}"` : raw
}

/** The whole file, CRLF line ends; headers are escaped like cells (a label can be formula-like too). */
export const toCsv = (table: { readonly header: ReadonlyArray<string>; readonly rows: ReadonlyArray<ReadonlyArray<Cell>> }) =>
  [table.header, ...table.rows].map((row) => row.map(csvField).join(",")).join("\r\n") + "\r\n"

/** The download's file name: the widget's title or id, safe characters only, with `.csv`. */
export const csvFileName = (title: string): string => {
  const base = title.replace(/[\p{Cc}\p{Cf}/\\:*?"<>|]/gu, "").trim().slice(0, 100)
  return `${base === "" ? "table" : base}.csv`
}

/** An export the table cannot answer: the widget holds no table, or the request names a column it does not show. */
export class ExportRefused extends Schema.TaggedError<ExportRefused>()("ExportRefused", {
  reason: Schema.Literal("not-a-table", "unknown-column"),
  column: Schema.optional(Schema.String),
  field: Schema.optional(Schema.String)
}) {}

export const refusalOf = (problem: ExportProblem): ExportRefused =>
  problem._tag === "NoTable"
    ? new ExportRefused({ reason: "not-a-table" })
    : new ExportRefused({ reason: "unknown-column", column: problem.column, field: problem.field })
