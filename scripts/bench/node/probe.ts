/** The node under test as a child process: its preload's samples (memory, CPU, delta → bytes) and /proc readings. */
import * as fs from "node:fs"
import { type Child, startChild } from "../Children.js"
import { withDeadline } from "./settings.js"

export interface ChildSample {
  readonly kind: "tick" | "reply" | "written"
  readonly rss: number
  readonly heapUsed: number
  readonly heapTotal: number
  readonly external: number
  readonly cpuMicros: number
}

/** The node under test: a child with the preload's message channel. */
export interface NodeChild extends Child {
  /** Latest sample from the preload. */
  latest: ChildSample | undefined
  readonly replies: Array<(sample: ChildSample) => void>
  readonly writtenReplies: Array<(values: ReadonlyArray<number>) => void>
}

export const startNodeChild = (name: string, args: ReadonlyArray<string>, env: Record<string, string>, cwd: string): NodeChild => {
  const handle: NodeChild = Object.assign(startChild(name, args, env, true, cwd), {
    latest: undefined,
    replies: [],
    writtenReplies: []
  })
  handle.process.on("message", (message: ChildSample | { readonly kind: "written"; readonly values: ReadonlyArray<number> }) => {
    if ("values" in message) return handle.writtenReplies.shift()?.(message.values)
    handle.latest = message
    if (message.kind === "reply") handle.replies.shift()?.(message)
  })
  return handle
}

/** The node under test, whose preload answers; the reference server has none. */
export const asNode = (child: Child): NodeChild => {
  if (!("replies" in child)) throw new Error(`${child.name} has no preload to ask`)
  return child as NodeChild
}

/** A sample from the child's preload, after a full collection when `gc`. */
export const askSample = (server: Child, gc: boolean) => {
  const child = asNode(server)
  return withDeadline(
    new Promise<ChildSample>((resolve) => {
      child.replies.push(resolve)
      child.process.send(gc ? "gc" : "sample")
    }),
    5000,
    `${child.name}: memory sample`
  )
}

/** The node's delta → bytes times (ms) since the previous call, from the preload. */
export const askWritten = (server: Child) => {
  const child = asNode(server)
  return withDeadline(
    new Promise<ReadonlyArray<number>>((resolve) => {
      child.writtenReplies.push(resolve)
      child.process.send("written")
    }),
    5000,
    `${child.name}: delta → bytes times`
  )
}

/** VmRSS of a process, in bytes, from /proc (undefined once it is gone). */
export const readRss = (pid: number): number | undefined => {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

export const readHwm = (pid: number): number | undefined => {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

/** RSS every 100 ms from /proc, heap from the preload's latest tick: the peaks over a window. */
export const trackMemory = (server: Child) => {
  const child = asNode(server)
  let peakRss = 0
  let peakHeapUsed = 0
  let peakHeapTotal = 0
  let samples = 0
  const take = () => {
    const rss = readRss(child.process.pid!)
    if (rss !== undefined) {
      peakRss = Math.max(peakRss, rss)
      samples++
    }
    if (child.latest !== undefined) {
      peakHeapUsed = Math.max(peakHeapUsed, child.latest.heapUsed)
      peakHeapTotal = Math.max(peakHeapTotal, child.latest.heapTotal)
    }
  }
  take()
  const timer = setInterval(take, 100)
  return () => {
    clearInterval(timer)
    take()
    return { peakRss, peakHeapUsed, peakHeapTotal, samples }
  }
}

/** CPU time (user + system) of a process in ms, from /proc (whose clock ticks are 1/100 s); 0 once it is gone. */
export const procCpuMs = (pid: number | undefined): number => {
  if (pid === undefined) return 0
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}
