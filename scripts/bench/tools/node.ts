/**
 * The nodes `npm run bench:tools` measures: built in-process from a commit's modules on a fresh data dir, the
 * probe package installed through the node's own routes, and turns over HTTP; the baseline's ledger modules.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as PackageToolsLive from "../../../layers/node/packages/PackageTools.js"
import * as Scripted from "../../../layers/node/model/Scripted.js"
import { NodeApi } from "../../../schema/node/Api.js"
import { Ledger } from "../../../services/node/Ledger.js"
import type { NodeModules } from "../node/modules.js"

const appSecret = "bench-app-secret"

const script: Scripted.ScriptInput = {
  rules: [
    {
      match: "^read probe",
      steps: [{ tool: { name: "probe-service__read_value", input: { key: "colour" } } }],
      after: [{ delta: "Read." }]
    },
    { match: "^plain", steps: [{ delta: "Read." }] }
  ]
}

export const personHeaders = (token: string) => ({ authorization: `Bearer ${token}`, "x-app-secret": appSecret })

export const nodeClient = (baseUrl: string, token: string) =>
  HttpApiClient.make(NodeApi, {
    baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeaders(personHeaders(token)))
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** Lists the folder and installs it as the person, granting the install approval when the node asks. */
export const install = (client: Effect.Effect.Success<ReturnType<typeof nodeClient>>, folder: string) =>
  Effect.gen(function*() {
    const listing = yield* client.packages.addLocal({ payload: { path: folder } })
    const [first, response] = yield* client.packages.install({
      payload: { packageId: listing.packageId, localDigest: listing.contentDigest! },
      withResponse: true
    })
    if (response.status === 202 && "approvalId" in first) {
      const approval = yield* client.packages.approval({ path: { approvalId: first.approvalId as string } })
      yield* client.packages.decideApproval({
        path: { approvalId: approval.approvalId },
        payload: { decision: "granted", digest: approval.operationDigest }
      })
    }
    return listing.packageId
  })

/** One turn on the waiting route; dies unless it answered 200 with the reply done. */
export const turn = (baseUrl: string, token: string, conversationId: string, text: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${baseUrl}/conversations/${conversationId}/messages`, {
      method: "POST",
      headers: { ...personHeaders(token), "content-type": "application/json" },
      body: JSON.stringify({ text })
    })
    const body = await response.text()
    if (response.status !== 200) throw new Error(`turn answered ${response.status}: ${body}`)
    return body
  })

export const newConversation = (baseUrl: string, token: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${baseUrl}/conversations`, {
      method: "POST",
      headers: { ...personHeaders(token), "content-type": "application/json" },
      body: "{}"
    })
    return ((await response.json()) as { conversationId: string }).conversationId
  })

/**
 * A node built in this process from `modules` with the scripted model `script`, on a fresh data dir (removed with
 * the scope), serving on a loopback port: its built context, address and local token.
 */
export const serveInProcess = (modules: NodeModules, script: Scripted.ScriptInput, prefix: string) =>
  Effect.gen(function*() {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true })))
    const options = {
      dataDir,
      appSecret: Redacted.make(appSecret),
      model: modules.Scripted.fromScript(modules.Scripted.decodeScript(script)),
      turns: {
        wallClock: Duration.minutes(5),
        hostControlWait: Duration.seconds(5),
        questionTtl: Duration.hours(24),
        waitBudget: Duration.seconds(60)
      },
      marketplaceUrl: null,
      registryUrl: null
    }
    const services = modules.ServicesLive(options)
    const server = modules.serveApi(modules.ApiLive(options, services)).pipe(
      Layer.provideMerge(NodeHttpServer.layer(modules.createServer, { port: 0, host: "127.0.0.1" }))
    )
    const context = yield* Layer.build(Layer.merge(server, services))
    const baseUrl = yield* HttpServer.addressFormattedWith((address) => Effect.succeed(address)).pipe(Effect.provide(context))
    const token = JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken as string
    return { context, baseUrl, token }
  })

/** A node built from `modules` on a fresh data dir, serving on a loopback port, the probe installed. */
export const startNode = (modules: NodeModules, folder: string) =>
  Effect.gen(function*() {
    const { baseUrl, context, token } = yield* serveInProcess(modules, script, "clark-bench-tools-")
    const client = yield* nodeClient(baseUrl, token)
    yield* Effect.orDie(install(client, folder))
    const conversationId = yield* newConversation(baseUrl, token)
    return { context, baseUrl, token, conversationId }
  })

/** What the write rounds and the ledger's micro-benchmark take from the baseline commit besides its node. */
export interface LedgerModules {
  readonly Ledger: typeof Ledger
  readonly PackageToolsLive: typeof PackageToolsLive
  readonly SqlLedger: typeof import("../../../layers/node/ledger/SqlLedger.js")
}

export const loadLedgerModules = async (dir: string): Promise<LedgerModules> => {
  const load = (file: string) => import(pathToFileURL(path.join(dir, file)).href)
  const [ledger, packageTools, sqlLedger] = await Promise.all([
    load("services/node/Ledger.ts"),
    load("layers/node/packages/PackageTools.ts"),
    load("layers/node/ledger/SqlLedger.ts")
  ])
  return { Ledger: ledger.Ledger, PackageToolsLive: packageTools, SqlLedger: sqlLedger }
}
