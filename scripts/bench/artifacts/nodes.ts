/**
 * The nodes `npm run bench:artifacts` writes chunks to: this checkout's, and with BENCH_BASELINE_REF=<commit> that
 * commit's as well, its modules loaded through tsx from a temporary git worktree into the same process (its own
 * module graph, data dir and port; the dependencies are shared), so before and after run in one process under the
 * same load, taking turns.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { NodeModules } from "../node/modules.js"

export { currentModules, loadModules } from "../node/modules.js"

/** A node ready for chunks: its address, the person's headers and the widget's artifact routes. */
export interface ServedNode {
  readonly baseUrl: string
  readonly headers: Record<string, string>
  /** `/conversations/{id}/widgets/{instanceId}/artifacts` of the placed widget. */
  readonly prefix: string
  /** One JSON request as the person, from this process (fetch). */
  readonly call: (method: string, url: string, body?: unknown) => Effect.Effect<any>
}

const appSecret = "bench-app-secret"

/**
 * A node built from `modules` on a fresh data dir (removed when the scope closes), listening on a loopback port,
 * with a conversation made over HTTP and a widget placed in it through the node's own database.
 */
export const startNode = (modules: NodeModules) =>
  Effect.gen(function*() {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-artifacts-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true })))
    const options = {
      dataDir,
      appSecret: Redacted.make(appSecret),
      model: modules.NoModel.layer,
      marketplaceUrl: null,
      registryUrl: null
    }
    const context = yield* Layer.build(
      modules.serveApi(modules.ApiLive(options))
        .pipe(Layer.provideMerge(NodeHttpServer.layer(modules.createServer, { port: 0, host: "127.0.0.1" })))
    )
    const baseUrl = yield* HttpServer.addressFormattedWith((address) => Effect.succeed(address)).pipe(Effect.provide(context))
    const token = JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken as string
    const headers = { authorization: `Bearer ${token}`, "x-app-secret": appSecret, "content-type": "application/json" }
    const call = (method: string, url: string, body?: unknown) =>
      Effect.promise(async () => {
        const response = await fetch(`${baseUrl}${url}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
        const json: any = await response.json()
        if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`)
        return json
      })

    const { conversationId } = yield* call("POST", "/conversations", {})
    const instance = yield* Effect.scoped(Effect.flatMap(
      Layer.build(modules.SqlWidgetInstances.layer.pipe(Layer.provide(modules.NodeDatabase.layer(dataDir)))),
      (widgets) =>
        Effect.provide(
          Effect.flatMap(modules.WidgetInstances, (instances) =>
            instances.place({
              conversationId,
              packageId: "@bench/files",
              version: "1.0.0",
              contentDigest: "sha256:0",
              widgetId: "writer",
              props: {},
              bindings: [],
              offeredActions: [],
              taskId: null
            })),
          widgets
        )
    ))
    const prefix = `/conversations/${conversationId}/widgets/${instance.instanceId}/artifacts`
    return { baseUrl, headers, prefix, call } satisfies ServedNode
  })
