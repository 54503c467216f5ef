/**
 * Checking a tool call's input against its manifest's JSON Schema before anything is sent. Ajv compiles each
 * schema once per package digest and tool; it is imported by the first check, not at the node's start.
 */
import { Effect, SynchronizedRef } from "effect"
import type { Tool } from "../../../schema/node/Manifest.js"

type Validate = ((input: unknown) => boolean) & {
  errors?: ReadonlyArray<{ readonly instancePath: string; readonly message?: string | undefined }> | null | undefined
}

/** At most this many compiled schemas are kept; the oldest go first. */
const maxCompiled = 512

/** The first problem, as `path: what` (never the value itself). */
const firstProblem = (validate: Validate) => {
  const error = validate.errors?.[0]
  if (error === undefined) return "does not fit the tool's input schema"
  return `${error.instancePath === "" ? "input" : `input${error.instancePath.replaceAll("/", ".")}`}: ${error.message ?? "is not valid"}`
}

export const make = Effect.gen(function*() {
  const compiled = yield* SynchronizedRef.make(new Map<string, Validate>())
  const ajv = yield* Effect.cached(
    Effect.promise(() => import("ajv")).pipe(
      Effect.map((module) => {
        const Ajv = module.default as unknown as new(options: Record<string, unknown>) => {
          compile: (schema: unknown) => Validate
        }
        // `strict: false`: manifests may carry keywords Ajv does not know (descriptions, examples, formats).
        return new Ajv({ strict: false, allErrors: false, validateFormats: false })
      })
    )
  )

  /** A compiled schema is read without the lock (a press checks its input twice: the press, then the tool path). */
  const validator = (key: string, tool: Tool) =>
    Effect.flatMap(SynchronizedRef.get(compiled), (held) => {
      const known = held.get(key)
      return known !== undefined ? Effect.succeed(known) : compile(key, tool)
    })

  const compile = (key: string, tool: Tool) =>
    SynchronizedRef.modifyEffect(compiled, (map) =>
      Effect.gen(function*() {
        const known = map.get(key)
        if (known !== undefined) return [known, map] as const
        const compiler = yield* ajv
        const validate = yield* Effect.try(() => compiler.compile(tool.inputSchema)).pipe(
          Effect.orElseSucceed((): Validate => Object.assign(() => false, { errors: [{ instancePath: "", message: "the tool's input schema cannot be used" }] }))
        )
        const next = new Map(map)
        if (next.size >= maxCompiled) next.delete(next.keys().next().value!)
        next.set(key, validate)
        return [validate, next] as const
      }))

  /** `undefined` when the input fits; otherwise its first problem. Inputs are objects (MCP tool arguments). */
  const check = (digest: string, tool: Tool, input: unknown): Effect.Effect<string | undefined> =>
    typeof input !== "object" || input === null || Array.isArray(input)
      ? Effect.succeed("input: must be an object")
      : Effect.map(validator(`${digest}\u0000${tool.name}`, tool), (validate) =>
        validate(input) ? undefined : firstProblem(validate))

  return { check }
})
