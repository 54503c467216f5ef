/**
 * A scripted model for tests and the demo: deterministic deltas, reasoning,
 * tool calls (questions, host-control), delays and errors, chosen by matching
 * the newest user text against the script's rules.
 *
 * Script file (JSON):
 *   { "rules": [{ "match": "regex", "steps": [Step], "after": [Step] }], "default": [Step] }
 * Step: {"delta": text} | {"reasoning": text} | {"delay": ms} | {"echo": true}
 *     | {"tool": {"name", "input"}} | {"question": input of ask_user_question}
 *     | {"hostControl": input of host_control} | {"error": message}
 *     | {"toolFromText": name}: a call of that tool whose input is the JSON object written in the user's text (from
 *       its first `{` to its last `}`), for tools whose input names what only exists at run time (a widget's id).
 *     | {"stamp": true}: a delta whose text is this machine's monotonic clock, in nanoseconds, when the model
 *       produced it; a client on the same machine measures how long the delta took to reach it.
 * `steps` answer a user message; `after` answers the result of a tool call.
 */
import { Effect, Layer, Schema } from "effect"
import * as fs from "node:fs"
import { ModelFailure, type ModelMessage, ModelProvider } from "../../../services/node/ModelProvider.js"

const Step = Schema.Union(
  Schema.Struct({ delta: Schema.String }),
  Schema.Struct({ reasoning: Schema.String }),
  Schema.Struct({ delay: Schema.Number.pipe(Schema.nonNegative()) }),
  Schema.Struct({ echo: Schema.Literal(true) }),
  Schema.Struct({ stamp: Schema.Literal(true) }),
  Schema.Struct({ tool: Schema.Struct({ name: Schema.String, input: Schema.Unknown }) }),
  Schema.Struct({ toolFromText: Schema.String }),
  Schema.Struct({ question: Schema.Unknown }),
  Schema.Struct({ hostControl: Schema.Unknown }),
  Schema.Struct({ error: Schema.String })
)
type Step = typeof Step.Type

const Rule = Schema.Struct({
  match: Schema.String,
  steps: Schema.Array(Step),
  after: Schema.optionalWith(Schema.Array(Step), { default: () => [] })
})

export const Script = Schema.Struct({
  rules: Schema.optionalWith(Schema.Array(Rule), { default: () => [] }),
  default: Schema.optionalWith(Schema.Array(Step), { default: () => [{ delta: "You said: " }, { echo: true as const }] })
})
export type Script = typeof Script.Type
export type ScriptInput = typeof Script.Encoded

const lastUserText = (messages: ReadonlyArray<ModelMessage>) => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role === "user") return message.text
  }
  return ""
}

/** The JSON object written in a text, or null when there is none that parses. */
const jsonIn = (text: string): unknown => {
  const start = text.indexOf("{")
  const end = text.lastIndexOf("}")
  if (start < 0 || end < start) return null
  try {
    return JSON.parse(text.slice(start, end + 1))
  } catch {
    return null
  }
}

/** The script's rules with their patterns compiled once, not on every run of the model. */
const compiled = (script: Script) => script.rules.map((rule) => ({ rule, pattern: new RegExp(rule.match, "i") }))

const stepsFor = (script: Script, rules: ReturnType<typeof compiled>, messages: ReadonlyArray<ModelMessage>): ReadonlyArray<Step> => {
  const text = lastUserText(messages)
  const rule = rules.find(({ pattern }) => pattern.test(text))?.rule
  const answeringTool = messages[messages.length - 1]?.role === "tool"
  if (answeringTool) return rule?.after ?? []
  return rule?.steps ?? script.default
}

export const fromScript = (script: Script): Layer.Layer<ModelProvider> => {
  const rules = compiled(script)
  // Made once, not per call: on Node 20 a generator function made per call gets a map of its own, which keeps what it
  // captured alive through scavenges until a full collection (docs/decisions.md).
  const run = Effect.fnUntraced(function*(
    request: Parameters<ModelProvider["Type"]["run"]>[0],
    onEvent: Parameters<ModelProvider["Type"]["run"]>[1]
  ) {
    let calls = 0
    const text = lastUserText(request.messages)
    for (const step of stepsFor(script, rules, request.messages)) {
      if ("delta" in step) onEvent({ _tag: "TextDelta", text: step.delta })
      else if ("reasoning" in step) onEvent({ _tag: "ReasoningDelta", text: step.reasoning })
      else if ("echo" in step) onEvent({ _tag: "TextDelta", text })
      else if ("stamp" in step) onEvent({ _tag: "TextDelta", text: String(process.hrtime.bigint()) })
      else if ("delay" in step) yield* Effect.sleep(step.delay)
      else if ("error" in step) return yield* Effect.fail(new ModelFailure({ code: "script-error", message: step.error }))
      else {
        const id = `call_${++calls}`
        onEvent(
          "tool" in step
            ? { _tag: "ToolCall", id, name: step.tool.name, input: step.tool.input }
            : "toolFromText" in step
            ? { _tag: "ToolCall", id, name: step.toolFromText, input: jsonIn(text) }
            : "question" in step
            ? { _tag: "ToolCall", id, name: "ask_user_question", input: step.question }
            : { _tag: "ToolCall", id, name: "host_control", input: step.hostControl }
        )
      }
    }
  })
  return Layer.succeed(
    ModelProvider,
    ModelProvider.of({
      info: { provider: "scripted", name: "script" },
      run
    })
  )
}

export const decodeScript = (input: unknown): Script =>
  Schema.decodeUnknownSync(Script)(input, { onExcessProperty: "error" })

/** The scripted model of `--model scripted:FILE`. */
export const layer = (file: string): Layer.Layer<ModelProvider> =>
  Layer.unwrapEffect(
    Effect.try({
      // A rule's pattern that is not a regular expression is refused here too, where fromScript compiles it.
      try: () => fromScript(decodeScript(JSON.parse(fs.readFileSync(file, "utf8")))),
      catch: (error) => new Error(`Cannot use the script ${file}: ${String(error)}`)
    }).pipe(Effect.orDie)
  )
