/** Table export's pure rules: rows chosen over shown columns, columns picked, formula cells defused, CSV quoting. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { csvField, csvFileName, datasetOf, exportRows, type TableDataset, toCsv } from "../../../services/node/TableExport.js"

const dataset: TableDataset = {
  columns: [{ key: "harbour", label: "Harbour" }, { key: "height", label: "Height (m)" }, { key: "note" }, { key: "secret", hidden: true }],
  rows: [
    { harbour: "Kiel", height: 1.2, note: "calm", secret: "k1" },
    { harbour: "Aarhus", height: 0.4, note: "=HYPERLINK(\"http://evil\")", secret: "k2" },
    { harbour: "Bremen", height: 2.5, note: null, secret: "needle" },
    { harbour: "Cuxhaven", height: 1.2, note: "windy, cold", secret: "k4" }
  ]
}

const names = (request: Parameters<typeof exportRows>[1]) =>
  Either.getOrThrow(exportRows(dataset, request)).rows.map((row) => row[0])

describe("exportRows", () => {
  it.each([
    ["every row in the dataset's order", {}, ["Kiel", "Aarhus", "Bremen", "Cuxhaven"]],
    ["a query over every shown column", { query: "WIND" }, ["Cuxhaven"]],
    ["a query never matches a hidden column", { query: "needle" }, []],
    ["a numeric filter", { filters: [{ column: "height", op: "gte" as const, value: 1.2 }] }, ["Kiel", "Bremen", "Cuxhaven"]],
    ["an equality filter on numbers", { filters: [{ column: "height", op: "eq" as const, value: 1.2 }] }, ["Kiel", "Cuxhaven"]],
    ["a null filter", { filters: [{ column: "note", op: "eq" as const, value: null }] }, ["Bremen"]],
    ["contains, whatever the case", { filters: [{ column: "harbour", op: "contains" as const, value: "EN" }] }, ["Bremen", "Cuxhaven"]],
    ["filters together", { filters: [{ column: "height", op: "lt" as const, value: 2 }, { column: "harbour", op: "neq" as const, value: "Kiel" }] }, ["Aarhus", "Cuxhaven"]],
    ["a sort, stable for equal keys", { sort: [{ column: "height", direction: "desc" as const }] }, ["Bremen", "Kiel", "Cuxhaven", "Aarhus"]],
    ["two sort keys", { sort: [{ column: "height", direction: "asc" as const }, { column: "harbour", direction: "desc" as const }] }, ["Aarhus", "Kiel", "Cuxhaven", "Bremen"]],
    ["empty cells sort last", { sort: [{ column: "note", direction: "asc" as const }] }, ["Aarhus", "Kiel", "Cuxhaven", "Bremen"]]
  ])("%s", (_, request, expected) => {
    expect(names(request)).toEqual(expected)
  })

  it("picks columns without changing which rows are chosen", () => {
    const table = Either.getOrThrow(exportRows(dataset, { columns: ["height", "harbour"], query: "calm" }))
    expect(table).toEqual({ header: ["Height (m)", "Harbour"], rows: [[1.2, "Kiel"]] })
  })

  it("carries every shown column by default, never a hidden one", () => {
    expect(Either.getOrThrow(exportRows(dataset, {})).header).toEqual(["Harbour", "Height (m)", "note"])
  })

  it.each([
    ["sort", { sort: [{ column: "secret", direction: "asc" as const }] }],
    ["filters", { filters: [{ column: "nope", op: "eq" as const, value: 1 }] }],
    ["columns", { columns: ["harbour", "secret"] }]
  ])("refuses a column the table does not show in %s", (field, request) => {
    expect(exportRows(dataset, request)).toEqual(Either.left({ _tag: "UnknownColumn", column: expect.any(String), field }))
  })
})

describe("datasetOf", () => {
  it.each([
    ["no props", null],
    ["props without a table", { harbour: "Kiel" }],
    ["a table without columns", { table: { columns: [], rows: [] } }],
    ["a cell that is not a scalar", { table: { columns: [{ key: "a" }], rows: [{ a: { nested: true } }] } }]
  ])("refuses %s", (_, props) => {
    expect(Either.isLeft(datasetOf(props))).toBe(true)
  })

  it("reads props.table", () => {
    expect(Either.getOrThrow(datasetOf({ table: dataset }))).toEqual(dataset)
  })
})

describe("csvField", () => {
  it.each([
    ["=1+2", "'=1+2"],
    ["+1", "'+1"],
    ["-1", "'-1"],
    ["@SUM(A1)", "'@SUM(A1)"],
    ["\tcmd", "'\tcmd"],
    ["\rcmd", "\"'\rcmd\""],
    ["\uff1d1+2", "'\uff1d1+2"],
    ["plain", "plain"],
    ["a,b", "\"a,b\""],
    ["say \"hi\"", "\"say \"\"hi\"\"\""],
    ["two\nlines", "\"two\nlines\""],
    [" padded", "\" padded\""],
    [-1, "-1"],
    [true, "true"],
    [null, ""]
  ])("%j → %j", (cell, expected) => {
    expect(csvField(cell)).toBe(expected)
  })
})

describe("toCsv and csvFileName", () => {
  it("writes CRLF lines with an escaped header", () => {
    expect(toCsv({ header: ["=a", "b"], rows: [["x", 1]] })).toBe("'=a,b\r\nx,1\r\n")
  })

  it.each([
    ["tide-table", "tide-table.csv"],
    ["a/b\\c:d", "abcd.csv"],
    ["\u202e", "table.csv"]
  ])("%j → %j", (title, expected) => {
    expect(csvFileName(title)).toBe(expected)
  })
})
