/**
 * The client of `npm run bench:widgets` in its own process (started with an IPC channel), as the app is another
 * process: the nodes' figures carry none of its work. It installs the probe package on each node through the node's
 * routes, places the widgets by scripted turns, then runs rounds of the variants one call at a time, interleaved
 * (which goes first turns with the round): the tool call itself (the SDK `Client` over stdio calling `read_value` on
 * a process of the same package copy, started by this process), a `done` press of the read binding on each node, and
 * a press on each of plain-press.ts's servers (POST /press, a new invocation id each).
 *
 * The press: node:http over one kept-alive connection per node; each body built from strings made once (only the
 * revision and the invocation id change); the wall time runs from the request to the response's last byte, its JSON
 * read after. Each call's CPU is this process's (process.cpuUsage around it: the client's side).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as http from "node:http"
import * as path from "node:path"
import { performance } from "node:perf_hooks"

export interface TargetSpec {
  readonly key: string
  readonly port: number
  readonly token: string
  readonly appSecret: string
}

/** A server of plain-press.ts. */
export interface PlainSpec {
  readonly key: string
  readonly port: number
}

export type DriverMessage =
  | {
    readonly kind: "setup"
    readonly folder: string
    readonly targets: ReadonlyArray<TargetSpec>
    readonly plains: ReadonlyArray<PlainSpec>
    readonly instances: number
  }
  | { readonly kind: "rounds"; readonly firstRound: number; readonly rounds: number }
  | { readonly kind: "exit" }

/** Per variant (`tool`, then each target's key): wall ms of each call and the client's CPU ms summed. */
export interface Samples {
  readonly ms: Record<string, Array<number>>
  readonly cpu: Record<string, number>
}

export type DriverReply =
  | { readonly kind: "ready" }
  | { readonly kind: "samples"; readonly samples: Samples }
  | { readonly kind: "failed"; readonly message: string }

export const toolVariant = "tool"
const input = { key: "colour" }

interface Response {
  readonly status: number
  readonly text: string
}

/**
 * A request on `agent`; a kept-alive socket the node closed while the request was on its way is retried once, as
 * Node's documentation advises (the node closes idle sockets after 5 s, e.g. between setup and the rounds).
 */
const send = (agent: http.Agent, port: number, headers: Record<string, string>, method: string, route: string, body?: string) =>
  new Promise<Response>((resolve, reject) => {
    const attempt = (retried: boolean) => {
      const request = http.request({
        host: "127.0.0.1",
        port,
        method,
        path: route,
        agent,
        headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) }
      }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", reject)
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      })
      request.on("error", (error: NodeJS.ErrnoException) => {
        if (!retried && request.reusedSocket && error.code === "ECONNRESET") return attempt(true)
        reject(error)
      })
      request.end(body)
    }
    attempt(false)
  })

interface Instance {
  readonly instanceId: string
  revision: number
}

/** One node: its client, its placed instances and its press. */
const prepare = async (spec: TargetSpec, folder: string, count: number) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const headers = {
    authorization: `Bearer ${spec.token}`,
    "x-app-secret": spec.appSecret,
    "content-type": "application/json"
  }
  const call = async (method: string, route: string, body?: unknown) => {
    const response = await send(agent, spec.port, headers, method, route, body === undefined ? undefined : JSON.stringify(body))
    if (response.status >= 300 && response.status !== 202) throw new Error(`${spec.key}: ${method} ${route} answered ${response.status}: ${response.text}`)
    return JSON.parse(response.text)
  }
  const listing = await call("POST", "/packages/local", { path: folder })
  const installed = await call("POST", "/packages/install", { packageId: listing.packageId, localDigest: listing.contentDigest })
  if (installed.approvalId !== undefined) {
    const approval = await call("GET", `/packages/approvals/${installed.approvalId}`)
    await call("POST", `/packages/approvals/${installed.approvalId}/decision`, { decision: "granted", digest: approval.operationDigest })
  }
  const conversationId = String((await call("POST", "/conversations", {})).conversationId)
  const instances: Array<Instance> = []
  let digest = ""
  for (let i = 0; i < count; i++) {
    const turn = await call("POST", `/conversations/${conversationId}/messages`, { text: "place probe" })
    const reply = turn.timeline.entries.find((entry: any) => entry.role === "assistant")
    const placed = reply.blocks.find((block: any) => block.name === "place_widget").output
    digest = placed.bindings.find((binding: any) => binding.id === "read").digest
    instances.push({ instanceId: placed.instanceId, revision: placed.revision })
  }
  // The press body (test/node/widgets/Fixtures.ts pressOf) as text made once; the digest is the same on every instance.
  const head = `{"actionBindingId":"read","expectedBindingDigest":${JSON.stringify(digest)},"input":${JSON.stringify(input)},"expectedRevision":`
  const routes = instances.map((instance) => `/conversations/${conversationId}/widgets/${instance.instanceId}/actions`)
  let pressed = 0
  /** One `done` press, turning over the instances (at most 600 a minute per binding); its wall ms. */
  const press = async () => {
    const k = pressed % instances.length
    const instance = instances[k]!
    const body = `${head}${instance.revision},"invocationId":"bench-${spec.key}-${pressed++}"}`
    const started = performance.now()
    const response = await send(agent, spec.port, headers, "POST", routes[k]!, body)
    const ms = performance.now() - started
    const answer = response.status === 200 ? JSON.parse(response.text) : undefined
    if (answer?.outcome !== "done") throw new Error(`${spec.key}: the press answered ${response.status}: ${response.text}`)
    instance.revision = answer.revision
    return ms
  }
  return { key: spec.key, press, close: () => agent.destroy() }
}

/** One of plain-press.ts's servers and its press. */
const preparePlain = (spec: PlainSpec) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const headers = { "content-type": "application/json" }
  const tail = `,"input":${JSON.stringify(input)}}`
  let pressed = 0
  const press = async () => {
    const body = `{"invocationId":"bench-${spec.key}-${pressed++}"${tail}`
    const started = performance.now()
    const response = await send(agent, spec.port, headers, "POST", "/press", body)
    const ms = performance.now() - started
    if (response.status !== 200 || JSON.parse(response.text).outcome !== "done") {
      throw new Error(`${spec.key}: the press answered ${response.status}: ${response.text}`)
    }
    return ms
  }
  return { key: spec.key, press, close: () => agent.destroy() }
}

let variants: Array<{ readonly key: string; readonly run: () => Promise<number> }> = []
let direct: Client | undefined
let closers: Array<() => void> = []

const setup = async (message: Extract<DriverMessage, { kind: "setup" }>) => {
  const servers = []
  for (const spec of message.targets) servers.push(await prepare(spec, message.folder, message.instances))
  servers.push(...message.plains.map(preparePlain))
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(message.folder, "server.mjs")], cwd: message.folder })
  const client = new Client({ name: "bench-direct", version: "1.0.0" }, { capabilities: {} })
  await client.connect(transport)
  direct = client
  const tool = async () => {
    const started = performance.now()
    await client.callTool({ name: "read_value", arguments: input })
    return performance.now() - started
  }
  variants = [{ key: toolVariant, run: tool }, ...servers.map((server) => ({ key: server.key, run: server.press }))]
  closers = servers.map((server) => server.close)
}

const rounds = async (message: Extract<DriverMessage, { kind: "rounds" }>): Promise<Samples> => {
  const ms: Record<string, Array<number>> = {}
  const cpu: Record<string, number> = {}
  for (const variant of variants) {
    ms[variant.key] = []
    cpu[variant.key] = 0
  }
  for (let round = message.firstRound; round < message.firstRound + message.rounds; round++) {
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(round + k) % variants.length]!
      const before = process.cpuUsage()
      const wall = await variant.run()
      const used = process.cpuUsage(before)
      ms[variant.key]!.push(wall)
      cpu[variant.key]! += (used.user + used.system) / 1000
    }
  }
  return { ms, cpu }
}

const reply = (message: DriverReply) => process.send?.(message)

process.on("message", (message: DriverMessage) => {
  if (message.kind === "exit") {
    for (const close of closers) close()
    void (direct?.close() ?? Promise.resolve()).finally(() => process.disconnect())
    return
  }
  const work = message.kind === "setup"
    ? setup(message).then((): DriverReply => ({ kind: "ready" }))
    : rounds(message).then((samples): DriverReply => ({ kind: "samples", samples }))
  work.then(reply, (error: unknown) => reply({ kind: "failed", message: error instanceof Error ? error.stack ?? error.message : String(error) }))
})
