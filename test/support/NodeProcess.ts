/**
 * The real node as its own process (`clark node serve`, the compiled CLI the host app runs), for what only another
 * process shows: a SIGKILL in the middle of work. Scoped: the process is killed and awaited when the scope closes.
 * The build is kept fresh by test/support/BuildCli.ts (vitest's global setup); starting the sources through a
 * TypeScript loader instead cost each start seconds of compiling.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ScriptInput } from "../../layers/node/model/Scripted.js"
import { eventually } from "./NodeFixtures.js"
import { freePort } from "./Ports.js"

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

export const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once("exit", () => resolve())
  })

export interface NodeProcess {
  readonly baseUrl: string
  readonly token: string
  readonly appSecret: string
  /** The person's headers (token and app secret), with a JSON body. */
  readonly headers: Record<string, string>
  readonly child: ChildProcess
  /** Everything it wrote to stdout and stderr so far. */
  readonly output: () => string
  readonly fetchJson: (method: string, route: string, body?: unknown) => Effect.Effect<{ status: number; body: any }>
}

export const spawnNode = (options: {
  readonly dataDir: string
  readonly script: ScriptInput
  /** `false` runs the TypeScript sources through a loader (slow) rather than the compiled CLI (`bin/clark.js`). */
  readonly compiled?: boolean
  readonly appSecret?: string
  /** More environment for the node's process (settings the host application passes at launch). */
  readonly env?: Record<string, string>
}) =>
  Effect.gen(function*() {
    const scriptFile = path.join(options.dataDir, "..", `${path.basename(options.dataDir)}-script.json`)
    fs.writeFileSync(scriptFile, JSON.stringify(options.script))
    const port = yield* Effect.promise(freePort)
    const appSecret = options.appSecret ?? "process-test-app-secret"
    const entry = options.compiled === false ? ["--import", "tsx", "src/cli/main.ts"] : ["bin/clark.js"]
    const child = spawn(
      process.execPath,
      [...entry, "node", "serve", "--data-dir", options.dataDir, "--port", String(port), "--model", `scripted:${scriptFile}`],
      { cwd: projectRoot, env: { ...process.env, ...options.env, CC_APP_SECRET: appSecret }, stdio: ["ignore", "pipe", "pipe"] }
    )
    let output = ""
    child.stdout?.on("data", (chunk) => (output += String(chunk)))
    child.stderr?.on("data", (chunk) => (output += String(chunk)))
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        await exited(child)
      })
    )
    const baseUrl = `http://127.0.0.1:${port}`
    yield* eventually(
      Effect.promise(() => fetch(`${baseUrl}/health`).then((r) => r.status, () => (child.exitCode === null ? 0 : -1))),
      (status) => status === 200 || status === -1,
      "the node answers /health",
      1500
    ).pipe(Effect.tap((status) => status === -1 ? Effect.dieMessage(`the node exited: ${output}`) : Effect.void))
    const token = JSON.parse(fs.readFileSync(path.join(options.dataDir, "identity.json"), "utf8")).localToken as string
    const headers = { authorization: `Bearer ${token}`, "x-app-secret": appSecret, "content-type": "application/json" }
    const fetchJson: NodeProcess["fetchJson"] = (method, route, body) =>
      Effect.promise(() =>
        fetch(`${baseUrl}${route}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
          .then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }))
      )
    return { baseUrl, token, appSecret, headers, child, output: () => output, fetchJson } satisfies NodeProcess
  })
