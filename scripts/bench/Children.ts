/** The benchmarks' child processes (servers under test, reference servers): start, watch, stop. */
import { type ChildProcess, spawn } from "node:child_process"
import { root } from "./Common.js"

export interface Child {
  readonly name: string
  readonly process: ChildProcess
  /** The last 200 lines it wrote, for the message when it fails. */
  readonly output: Array<string>
  readonly exited: Promise<void>
}

/** Every child still running; stopped at the end, killed on Ctrl-C. */
export const children = new Set<Child>()

/**
 * `node ARGS` in `cwd` (the project root unless given, e.g. another build's checkout), with `env` over this process's
 * environment; `ipc` opens a message channel.
 */
export const startChild = (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  ipc = false,
  cwd: string = root
): Child => {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"]
  })
  const output: Array<string> = []
  const collect = (chunk: Buffer) => {
    output.push(...chunk.toString("utf8").split("\n").filter((line) => line.length > 0))
    if (output.length > 200) output.splice(0, output.length - 200)
  }
  child.stdout?.on("data", collect)
  child.stderr?.on("data", collect)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const handle: Child = { name, process: child, output, exited }
  children.add(handle)
  return handle
}

export const isRunning = (child: Child) => child.process.exitCode === null && child.process.signalCode === null

/** SIGTERM, then SIGKILL after 5 s. */
export const stopChild = async (child: Child) => {
  children.delete(child)
  if (!isRunning(child)) return
  child.process.kill("SIGTERM")
  const stopped = await Promise.race([
    child.exited.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000))
  ])
  if (!stopped) {
    child.process.kill("SIGKILL")
    await child.exited
  }
}

export const stopAll = () => Promise.all([...children].map(stopChild))

/** For Ctrl-C: no time to wait. */
export const killAll = () => {
  for (const child of children) child.process.kill("SIGKILL")
}

export const childFailure = (child: Child, what: string) =>
  new Error(`${child.name} ${what}; its last output:\n${child.output.slice(-40).join("\n") || "(none)"}`)

export const assertRunning = (child: Child) => {
  if (!isRunning(child)) throw childFailure(child, `exited with ${child.process.exitCode ?? child.process.signalCode}`)
}
