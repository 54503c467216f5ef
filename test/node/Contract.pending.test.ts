/**
 * The pending node handlers behind a real router: every declared route is
 * routed and answers 501 NOT_IMPLEMENTED (or the decoder's 400 where the
 * sample request does not decode).
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeApi } from "../../schema/node/Api.js"
import { NotImplementedYet } from "../../services/node/PendingErrors.js"
import { Authenticated, PersonOnly } from "../../schema/node/Security.js"
import { PendingGroupsLive } from "../../src/node/handlers/Pending.js"
import { toNodeError } from "../../src/node/http/Errors.js"
import { concrete, declared, expected } from "./ContractRoutes.js"

// ---------------------------------------------------------------------------
// The pending handlers behind a real router

const person = { surface: "person", channel: "text" } as const
const AuthenticatedStub = Layer.succeed(Authenticated, Authenticated.of({ bearer: () => Effect.succeed(person) }))
const PersonOnlyStub = Layer.succeed(PersonOnly, PersonOnly.of({ bearer: () => Effect.succeed(person) }))

const unbuilt = () => Effect.fail(toNodeError(new NotImplementedYet({ feature: "not in this test" })))
const DeclaredGroupsStub = Layer.mergeAll(
  HttpApiBuilder.group(NodeApi, "public", (handlers) =>
    handlers.handle("health", unbuilt).handle("discovery", unbuilt).handle("openapi", unbuilt)),
  HttpApiBuilder.group(NodeApi, "conversations", (handlers) =>
    handlers
      .handle("node", unbuilt)
      .handle("list", unbuilt)
      .handle("create", unbuilt)
      .handle("send", unbuilt)
      .handle("stream", unbuilt)
      .handle("stop", unbuilt)
      .handle("timeline", unbuilt)
      .handle("emergencyStop", unbuilt)),
  HttpApiBuilder.group(NodeApi, "questions", (handlers) =>
    handlers.handle("answer", unbuilt).handle("cancel", unbuilt).handle("askAgain", unbuilt)),
  HttpApiBuilder.group(NodeApi, "hostControl", (handlers) => handlers.handle("answer", unbuilt)),
  HttpApiBuilder.group(NodeApi, "deletion", (handlers) => handlers.handle("delete", unbuilt).handle("confirm", unbuilt)),
  HttpApiBuilder.group(NodeApi, "appIntents", (handlers) => handlers.handle("perform", unbuilt)),
  HttpApiBuilder.group(NodeApi, "composer", (handlers) => handlers.handle("suggestions", unbuilt)),
  HttpApiBuilder.group(NodeApi, "maps", (handlers) =>
    handlers
      .handle("setTilePolicy", unbuilt)
      .handle("undoTilePolicy", unbuilt)
      .handle("tiles", unbuilt)
      .handle("key", unbuilt)
      .handle("setKey", unbuilt)
      .handle("removeKey", unbuilt)
      .handle("tile", unbuilt)),
  HttpApiBuilder.group(NodeApi, "packages", (handlers) =>
    handlers
      .handle("directory", unbuilt)
      .handle("listing", unbuilt)
      .handle("addLocal", unbuilt)
      .handle("install", unbuilt)
      .handle("requestInstall", unbuilt)
      .handle("approval", unbuilt)
      .handle("approvalEvents", unbuilt)
      .handle("decideApproval", unbuilt)
      .handle("storeCredential", unbuilt)
      .handle("startConnection", unbuilt)
      .handle("connectionCallback", unbuilt)),
  HttpApiBuilder.group(NodeApi, "preferences", (handlers) =>
    handlers
      .handle("setMachineTurns", unbuilt)
      .handle("setInstallMode", unbuilt)
      .handle("setDenyRules", unbuilt)
      .handle("setProjectFolders", unbuilt)),
  HttpApiBuilder.group(NodeApi, "inbox", (handlers) =>
    handlers
      .handle("inbox", unbuilt)
      .handle("skipVersion", unbuilt)
      .handle("unskipVersion", unbuilt)
      .handle("removeSkippedVersion", unbuilt)
      .handle("noticeAction", unbuilt)),
  // Built in src/node/handlers/Widgets.ts (with the job and export handlers of WidgetJobs.ts)
  HttpApiBuilder.group(NodeApi, "widgets", (handlers) =>
    handlers
      .handle("instance", unbuilt)
      .handle("frame", unbuilt)
      .handle("publishSemantic", unbuilt)
      .handle("semantic", unbuilt)
      .handle("press", unbuilt)
      .handle("export", unbuilt)
      .handle("jobs", unbuilt)
      .handle("job", unbuilt)
      .handle("cancelJob", unbuilt)),
  // Built in src/node/handlers/OfferedActions.ts
  HttpApiBuilder.group(NodeApi, "offeredActions", (handlers) => handlers.handle("waiting", unbuilt).handle("report", unbuilt)),
  // Built in src/node/handlers/Work.ts (reconcile); its other routes still answer 501 there too.
  HttpApiBuilder.group(NodeApi, "work", (handlers) =>
    handlers
      .handle("list", unbuilt)
      .handle("retry", unbuilt)
      .handle("cancel", unbuilt)
      .handle("activity", unbuilt)
      .handle("reconcile", unbuilt)
      .handle("decideTaskApproval", unbuilt)),
  // Built in src/node/handlers/Artifacts.ts and WidgetArtifacts.ts.
  HttpApiBuilder.group(NodeApi, "artifacts", (handlers) =>
    handlers.handle("get", unbuilt).handle("content", unbuilt).handle("export", unbuilt)),
  HttpApiBuilder.group(NodeApi, "widgetArtifacts", (handlers) =>
    handlers
      .handle("read", unbuilt)
      .handle("create", unbuilt)
      .handle("pick", unbuilt)
      .handle("writeChunk", unbuilt)
      .handle("finalize", unbuilt)
      .handle("attach", unbuilt)
      .handle("discard", unbuilt))
)

describe("pending node handlers", () => {
  it("route every declared path and answer 501 NOT_IMPLEMENTED", async () => {
    const { dispose, handler } = HttpApiBuilder.toWebHandler(
      Layer.mergeAll(
        HttpApiBuilder.api(NodeApi).pipe(
          Layer.provide(PendingGroupsLive),
          Layer.provide(DeclaredGroupsStub),
          Layer.provide(AuthenticatedStub),
          Layer.provide(PersonOnlyStub)
        ),
        HttpServer.layerContext
      )
    )
    try {
      for (const [method, path] of expected) {
        const response = await handler(
          new Request(`http://node.test${concrete(path)}`, {
            method,
            headers: { authorization: "Bearer test", "content-type": "application/json" },
            ...(method === "GET" ? {} : { body: "{}" })
          })
        )
        // Routed: the handler answers 501, or the request decoding 400 where the sample does not decode; never
        // the router's 404. (No envelope middleware here: the 400 is the decoder's own error.)
        const route = declared.find((row) => row.method === method && row.path === path)!
        const body: any = await response.json()
        if (route.samplesDecode) {
          expect({ route: `${method} ${path}`, status: response.status, code: body.code })
            .toEqual({ route: `${method} ${path}`, status: 501, code: "NOT_IMPLEMENTED" })
        } else {
          expect({ route: `${method} ${path}`, status: response.status, tag: body._tag })
            .toEqual({ route: `${method} ${path}`, status: 400, tag: "HttpApiDecodeError" })
        }
      }
      for (const path of ["/themes", "/inbox", "/map-tiles/3/2/1", "/work", "/artifacts/a1"]) {
        const response = await handler(new Request(`http://node.test${path}`, { headers: { authorization: "Bearer test" } }))
        expect(response.status).toBe(501)
        expect(await response.json()).toEqual({ code: "NOT_IMPLEMENTED", message: expect.any(String) })
      }
    } finally {
      await dispose()
    }
  })
})
