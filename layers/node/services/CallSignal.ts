/**
 * The abort signal of one tool call: only what the SDK's `request` reads of its `signal` (`throwIfAborted`,
 * `aborted`, `reason`, one `abort` listener), so that the call can still be cancelled one request at a time
 * (the SDK's listener sends `notifications/cancelled` and rejects the pending promise).
 *
 * Why not an AbortController: on Node 20 an AbortSignal with an `abort` listener keeps that listener alive
 * through young-generation scavenges, and the SDK's listener, never removed, holds its request and through it
 * the waiting fiber, so every press's objects were copied or promoted (docs/decisions.md). This one is a plain
 * object that drops its listener once the call has settled.
 */
export class CallSignal {
  aborted = false
  reason: unknown = undefined
  private listener: (() => void) | undefined = undefined

  addEventListener(type: string, listener: () => void): void {
    if (type === "abort" && !this.aborted) this.listener = listener
  }

  removeEventListener(type: string, listener: () => void): void {
    if (type === "abort" && this.listener === listener) this.listener = undefined
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  /** Aborts once: the listener runs (the SDK cancels its request), later calls do nothing. */
  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listener = this.listener
    this.listener = undefined
    listener?.()
  }

  /** The call has settled: nothing is left to cancel, so the SDK's listener (and what it holds) can go. */
  release(): void {
    this.listener = undefined
  }

  /** The SDK types its option as AbortSignal; it uses only the members above. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal
  }
}
