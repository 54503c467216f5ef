/**
 * The node contract against the spec's route tables: every route declared
 * exactly once with its method, path and protection (public, any token
 * holder, person-only), the statuses of its codes, and the OpenAPI
 * description without the routes the spec keeps out of it.
 */
import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { NodeApi } from "../../schema/node/Api.js"
import { decided, declared, expected, key, W } from "./ContractRoutes.js"

describe("node contract", () => {
  it("declares every route of the spec", () => {
    const routes = new Set(declared.map((row) => key(row.method, row.path)))
    const missing = expected.filter(([method, path]) => !routes.has(key(method, path)))
    expect(missing).toEqual([])
  })

  it("declares no route the spec does not list, beside the decided ones", () => {
    const listed = new Set([...expected, ...decided].map(([method, path]) => key(method, path)))
    const extra = declared.filter((row) => !listed.has(key(row.method, row.path))).map((row) => key(row.method, row.path))
    expect(extra).toEqual([])
  })

  it("declares each route exactly once", () => {
    const counts = new Map<string, number>()
    for (const row of declared) counts.set(key(row.method, row.path), (counts.get(key(row.method, row.path)) ?? 0) + 1)
    expect([...counts].filter(([, count]) => count > 1)).toEqual([])
    expect(new Set(expected.map(([method, path]) => key(method, path))).size).toBe(expected.length)
  })

  it("protects each route as the spec (or the decision) says", () => {
    const protectionOf = new Map(declared.map((row) => [key(row.method, row.path), row.protection]))
    const wrong = [...expected, ...decided]
      .filter(([method, path, protection]) => protectionOf.get(key(method, path)) !== protection)
      .map(([method, path, protection]) => ({ route: key(method, path), expected: protection, declared: protectionOf.get(key(method, path)) }))
    expect(wrong).toEqual([])
  })

  it("lists the person-only routes of the Authentication section", () => {
    const personOnly = declared
      .filter((row) => row.protection === "person-only")
      .map((row) => key(row.method, row.path))
      .sort()
    expect(personOnly).toEqual(
      [
        "POST /app-intents/host-control/{controlId}",
        "POST /tasks/{taskId}/approvals/{approvalId}/decide",
        "POST /packages/install",
        "POST /packages/approvals/{approvalId}/decision",
        "POST /effects/{effectId}/reconcile",
        `POST ${W}/export`,
        `POST ${W}/artifacts/pick`,
        "POST /artifacts/{artifactId}/export",
        "POST /conversations/{id}/delete",
        "POST /app-intents/confirm",
        "PUT /preferences/maps.tilePolicy",
        "POST /preferences/maps.tilePolicy/undo",
        "PUT /map-tiles/key",
        "DELETE /map-tiles/key",
        // Decided: loosening the install policy, or lifting a deny rule, is the person's own act.
        "PUT /preferences/execution.installs",
        "PUT /preferences/execution.denyRules",
        // Decided: approving a project folder gives references to its files.
        "PUT /preferences/composer.projectFolders"
      ].sort()
    )
  })

  it("declares the statuses of the codes the spec lists for a route", () => {
    const statusesOf = new Map(declared.map((row) => [key(row.method, row.path), row.errorStatuses]))
    const needs: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
      [`POST ${W}/actions`, [400, 403, 404, 409, 429, 502, 503, 504]],
      [`GET ${W}/jobs/{jobId}`, [404, 503]],
      [`POST ${W}/jobs/{jobId}`, [404, 409]],
      [`POST ${W}/artifacts/{artifactId}/chunks`, [403, 409, 429]],
      [`DELETE ${W}/artifacts/{artifactId}`, [403, 404]],
      ["GET /artifacts/{artifactId}", [404]],
      ["GET /artifacts/{artifactId}/content", [404, 409]],
      ["POST /work/{id}/retry", [404, 409, 429]],
      ["POST /packages/install", [400, 403, 409, 503]],
      ["POST /packages/approvals/{approvalId}/decision", [400, 403, 409]],
      ["POST /inbox/notices/{id}/skip-version", [409]],
      ["POST /inbox/notices/{id}/actions/{action}", [400, 403, 404, 409]],
      ["POST /effects/{effectId}/reconcile", [404, 409]],
      ["PUT /preferences/experience.themeRef", [400, 409]],
      ["PUT /preferences/maps.tilePolicy", [400]],
      ["GET /map-tiles/{z}/{x}/{y}", [400, 404, 429, 502, 503]],
      ["POST /conversations/{id}/delete", [404, 409]]
    ]
    const lacking = needs.flatMap(([route, statuses]) =>
      statuses.filter((status) => !(statusesOf.get(route) ?? []).includes(status)).map((status) => `${route} ${status}`)
    )
    expect(lacking).toEqual([])
  })
})

describe("node OpenAPI description", () => {
  const spec = OpenApi.fromApi(NodeApi)
  const paths = Object.keys(spec.paths)

  it("leaves out the theme, appearance, experience preference and inbox routes", () => {
    expect(paths.filter((path) => /^\/(?:themes|appearance|inbox)(?:\/|$)|^\/preferences\/experience\./.test(path))).toEqual(
      []
    )
  })

  it("describes the conversation routes", () => {
    expect(paths).toEqual(
      expect.arrayContaining([
        "/conversations",
        "/conversations/{id}/messages",
        "/conversations/{id}/messages/stream",
        "/conversations/{id}/timeline",
        "/conversations/{id}/delete"
      ])
    )
  })
})
