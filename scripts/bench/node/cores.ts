/**
 * Core layouts of the stream runs. Separate cores: the server under test on CPU 0, the driver on CPU 1 (a host app
 * runs on cores of its own in production). Shared cores: both free to run on every CPU the driver started with.
 */
import { spawnSync } from "node:child_process"
import * as os from "node:os"
import type { Child } from "../Children.js"
import { log } from "../Common.js"
import { type Layout, messageOf, settings } from "./settings.js"

/**
 * Separate cores: the server under test on one CPU, the driver on another. On a shared CPU, Linux wakes
 * the driver (the socket's reader) on the CPU of the server that wrote (a sync wake-up), so the driver
 * reads a delta only once the server yields that CPU, e.g. after finishing a turn right after its last
 * delta. A host app runs on cores of its own in production: separate cores measure what the node adds.
 */
export const separateCpus = { server: "0", driver: "1" }

export interface Cores {
  /** The driver's CPU list at start (e.g. "0,1" or "0-3"), which the servers inherit: shared cores. */
  readonly shared: string | undefined
  /** Why the stream runs are not measured with separate cores, when they are not. */
  separateSkipped: string | undefined
  /** Whether an affinity was changed since the last return to shared cores (only then is one due). */
  pinned: boolean
}

/** Runs util-linux taskset and returns its output; throws with the reason when it cannot. */
const taskset = (...args: Array<string>): string => {
  const result = spawnSync("taskset", args, { encoding: "utf8" })
  const command = `taskset ${args.join(" ")}`
  if (result.error !== undefined) throw new Error(`${command}: ${result.error.message}`)
  if (result.status !== 0) throw new Error(`${command} exited with ${result.status ?? result.signal}: ${result.stderr.trim()}`)
  return result.stdout
}

/** Puts every thread of a process on `cpus` (a list as taskset reads it, e.g. "0" or "0-1"). */
export const pin = (pid: number, cpus: string) => void taskset("-a", "-p", "-c", cpus, String(pid))

/** Shared cores only: no affinity is ever changed. */
const sharedOnly = (reason: string): Cores => ({ shared: undefined, separateSkipped: reason, pinned: false })

/** Whether separate cores can be set up (2 CPUs or more, taskset at hand) and the driver's CPUs. */
export const probeCores = (): Cores => {
  if (!settings.cores.includes("separate")) return sharedOnly(`BENCH_CORES=${settings.cores.join(",")}`)
  const cpus = os.availableParallelism()
  if (cpus < 2) return sharedOnly(`${cpus} CPU available, separate cores need 2`)
  try {
    const list = /list:\s*(\S+)/.exec(taskset("-p", "-c", String(process.pid)))?.[1]
    if (list === undefined) throw new Error("taskset -p -c printed no CPU list")
    return { shared: list, separateSkipped: undefined, pinned: false }
  } catch (error) {
    return sharedOnly(messageOf(error))
  }
}

/**
 * Puts the server and the driver in `layout` and returns the layout they are in: shared cores when
 * separate ones cannot be set (the reason is kept, logged and reported, and later runs skip them too).
 */
export const enterLayout = (cores: Cores, layout: Layout, server: Child): Layout => {
  if (layout === "separate" && cores.separateSkipped === undefined) {
    try {
      pin(server.process.pid!, separateCpus.server)
      cores.pinned = true
      pin(process.pid, separateCpus.driver)
      return "separate"
    } catch (error) {
      cores.separateSkipped = messageOf(error)
      log(`  separate cores skipped, shared cores instead: ${cores.separateSkipped}`)
    }
  }
  if (cores.pinned && cores.shared !== undefined) {
    pin(server.process.pid!, cores.shared)
    pin(process.pid, cores.shared)
    cores.pinned = false
  }
  return "shared"
}
