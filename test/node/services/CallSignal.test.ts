import { describe, expect, it } from "@effect/vitest"
import { CallSignal } from "../../../layers/node/services/CallSignal.js"

describe("CallSignal", () => {
  it("runs its abort listener once, with the reason readable, and throws that reason afterwards", () => {
    const call = new CallSignal()
    const seen: Array<unknown> = []
    call.signal.addEventListener("abort", () => seen.push(call.signal.reason))
    expect(() => call.signal.throwIfAborted()).not.toThrow()
    call.abort("cancelled by the node")
    call.abort("again")
    expect(seen).toEqual(["cancelled by the node"])
    expect(call.signal.aborted).toBe(true)
    expect(() => call.signal.throwIfAborted()).toThrow("cancelled by the node")
  })

  it("forgets its listener once the call has settled, so a later abort cancels nothing", () => {
    const call = new CallSignal()
    const seen: Array<string> = []
    call.signal.addEventListener("abort", () => seen.push("cancelled"))
    call.release()
    call.abort("the service is stopping")
    expect(seen).toEqual([])
  })

  it("takes a removed listener off and ignores other event types", () => {
    const call = new CallSignal()
    const seen: Array<string> = []
    const listener = () => seen.push("abort")
    call.signal.addEventListener("other", () => seen.push("other"))
    call.signal.addEventListener("abort", listener)
    call.signal.removeEventListener("abort", listener)
    call.abort("x")
    expect(seen).toEqual([])
  })
})
