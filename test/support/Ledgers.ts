/** The effect ledger in tests: the real layer on a data dir, a ledger whose writes fail, a read-only file. */
import { Context, Effect, Layer, Option } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as SqlLedger from "../../layers/node/ledger/SqlLedger.js"
import * as NodeDatabase from "../../layers/node/sql/NodeDatabase.js"
import { Ledger, type NewEffect } from "../../services/node/Ledger.js"
import { LedgerUnavailable } from "../../services/node/LedgerErrors.js"
import { Database } from "./NodeFixtures.js"

/** The real ledger of `dataDir`, over the main database of `mainDir` (the same data dir unless given). */
export const ledgerLayer = (dataDir: string, mainDir: string = dataDir) =>
  SqlLedger.layer(dataDir).pipe(Layer.provide(NodeDatabase.layer(mainDir)))

/** Builds the ledger, runs `use`, and closes it again (as a node that stops). */
export const withLedger = <A, E>(
  dataDir: string,
  use: (ledger: Ledger["Type"]) => Effect.Effect<A, E>,
  mainDir?: string
) =>
  Effect.scoped(Effect.flatMap(Layer.build(ledgerLayer(dataDir, mainDir)), (context) => use(Context.get(context, Ledger))))

/** A ledger whose every write fails as an unwritable file makes it; reads answer nothing. */
export const failingLedger = Layer.succeed(
  Ledger,
  Ledger.of({
    record: () => Effect.fail(new LedgerUnavailable({ operation: "record", detail: "test: the ledger refuses writes" })),
    answer: () => Effect.fail(new LedgerUnavailable({ operation: "answer", detail: "test: the ledger refuses writes" })),
    unknown: () => Effect.fail(new LedgerUnavailable({ operation: "unknown", detail: "test: the ledger refuses writes" })),
    markChecked: () =>
      Effect.fail(new LedgerUnavailable({ operation: "mark-checked", detail: "test: the ledger refuses writes" })),
    get: () => Effect.succeed(Option.none()),
    unknownEffects: Effect.succeed([]),
    reconcile: () => Effect.fail(new LedgerUnavailable({ operation: "reconcile", detail: "test: the ledger refuses writes" }))
  })
)

export const sampleEffect = (overrides: Partial<NewEffect> = {}): NewEffect => ({
  taskId: "task_1",
  conversationId: "conv_1",
  packageId: "@clark-examples/notes-service",
  packageDigest: "sha256:" + "a".repeat(64),
  tool: "add_note",
  risk: "local-write",
  origin: "person",
  input: { title: "Groceries", body: "eggs" },
  summary: "notes-service · add_note",
  ...overrides
})

/** The rows of the ledger file as another process sees them (a connection of its own, read-only). */
export const ledgerRows = (dataDir: string, sql = "SELECT * FROM effects ORDER BY rowid"): Array<any> => {
  const db = new Database(path.join(dataDir, "ledger.sqlite"), { readonly: true })
  try {
    return db.prepare(sql).all()
  } finally {
    db.close()
  }
}

/**
 * Makes a file or folder read-only for this process, and answers how to undo it. Root ignores mode bits, so as
 * root the immutable attribute is used (refused even to root; needs `chattr` and a file system that has it).
 */
export const makeReadOnly = (target: string): (() => void) => {
  if (process.getuid?.() === 0) {
    execFileSync("chattr", ["+i", target])
    return () => execFileSync("chattr", ["-i", target])
  }
  const mode = fs.statSync(target).mode & 0o777
  fs.chmodSync(target, fs.statSync(target).isDirectory() ? 0o555 : 0o444)
  return () => fs.chmodSync(target, mode)
}
