/**
 * Typed requests the host resolves itself, without the model: a message that
 * is only "open settings" opens settings.
 */
export interface AppIntent {
  readonly kind: string
  readonly [key: string]: unknown
}

const intents: ReadonlyArray<readonly [RegExp, AppIntent]> = [
  [/^(?:please\s+)?(?:open|show|go to)\s+(?:the\s+|my\s+)?settings$/i, { kind: "open-settings" }],
  [/^\/settings$/i, { kind: "open-settings" }],
  [/^(?:please\s+)?(?:open|show)\s+(?:the\s+|my\s+)?inbox$/i, { kind: "open-inbox" }],
  [/^(?:please\s+)?(?:start|open)\s+voice(?:\s+mode)?$/i, { kind: "start-voice" }]
]

export const resolveAppIntent = (text: string): AppIntent | undefined => {
  const typed = text.trim().replace(/[.!]+$/, "")
  return intents.find(([pattern]) => pattern.test(typed))?.[1]
}
