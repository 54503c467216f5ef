/**
 * What the package-tool tests share: a copy of the probe service package (its risk classes changed where a test
 * needs a risky tool), installing it through the node's own routes, and reading the ledger file.
 */
import { Effect } from "effect"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ledgerFile } from "../../../layers/node/ledger/LedgerDatabase.js"
import type { As } from "../../support/NodeServer.js"
import { Database, typedClient, wire } from "../../support/NodeFixtures.js"
import { probeFolder } from "../services/fixtures/Services.js"

export const probeId = "@clark-tests/probe-service"

/** A scripted model's step calling one of the probe's tools by its model-facing name. */
export const probeTool = (name: string, input: unknown) => ({ tool: { name: `probe-service__${name}`, input } })

/**
 * A copy of the probe package, as an installable package: its server bundled with the SDK into its entry (a
 * package in the node's cache has no node_modules). `risks` changes the risk class of named tools.
 */
export const probeCopy = (risks: Record<string, string> = {}) => {
  const target = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clark-probe-")), "probe-service")
  fs.cpSync(probeFolder, target, { recursive: true })
  esbuild.buildSync({
    entryPoints: [path.join(probeFolder, "server.mjs")],
    outfile: path.join(target, "server.mjs"),
    allowOverwrite: true,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    banner: { js: "import { createRequire as __r } from \"node:module\"; const require = __r(import.meta.url);" },
    logLevel: "error"
  })
  const file = path.join(target, "package.json")
  const json = JSON.parse(fs.readFileSync(file, "utf8"))
  for (const tool of json.clark.tools) if (risks[tool.name] !== undefined) tool.risk = risks[tool.name]
  fs.writeFileSync(file, JSON.stringify(json, null, 2))
  return target
}

/** Lists the folder and installs it as the person, granting the install approval when the node asks. */
export const install = (folder: string) =>
  Effect.gen(function*() {
    const client = yield* typedClient("person")
    const listing = yield* Effect.orDie(client.packages.addLocal({ payload: { path: folder } }))
    const first = yield* Effect.orDie(wire(client.packages.install({
      payload: { packageId: listing.packageId, localDigest: listing.contentDigest! },
      withResponse: true
    })))
    if (first.status === 202) {
      const approval = yield* Effect.orDie(client.packages.approval({ path: { approvalId: first.body.approvalId } }))
      const decided = yield* Effect.orDie(wire(client.packages.decideApproval({
        path: { approvalId: approval.approvalId },
        payload: { decision: "granted", digest: approval.operationDigest },
        withResponse: true
      })))
      if (decided.status !== 200) return yield* Effect.dieMessage(`install approval: ${JSON.stringify(decided.body)}`)
    } else if (first.status !== 200) {
      return yield* Effect.dieMessage(`install: ${JSON.stringify(first.body)}`)
    }
    return listing.packageId
  })

/** Rows of the node's ledger file, read-only. */
export const ledgerRows = (dataDir: string, sql = "SELECT * FROM effects ORDER BY recorded_at"): Array<any> => {
  const db = new Database(ledgerFile(dataDir), { readonly: true })
  try {
    return db.prepare(sql).all()
  } finally {
    db.close()
  }
}

export const setPreference = (key: "execution.machineTurns" | "execution.denyRules", value: unknown, as: As = "person") =>
  Effect.flatMap(typedClient(as), (client): Effect.Effect<{ readonly status: number; readonly body: any }> =>
    key === "execution.machineTurns"
      ? Effect.orDie(wire(client.preferences.setMachineTurns({ payload: { value }, withResponse: true })))
      : Effect.orDie(wire(client.preferences.setDenyRules({ payload: { value }, withResponse: true }))))
