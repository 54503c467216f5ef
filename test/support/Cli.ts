/**
 * The real `clark` command as a child process: the compiled program, `node bin/clark.js …`, as `npx clark`
 * runs it. The build is kept fresh by test/support/BuildCli.ts (vitest's global setup). Running the
 * TypeScript sources through a loader instead cost every command seconds of compiling, the larger part of
 * the CLI tests' time.
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const bin = path.join(root, "bin/clark.js")

/** Node's arguments that run `clark` with `args`. */
export const clarkArgs = (args: ReadonlyArray<string>) => [bin, ...args]

export interface Outcome {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** stdout and stderr together, for messages whose stream does not matter. */
  readonly output: string
}

export interface RunOptions {
  readonly env: NodeJS.ProcessEnv
  /** The command is killed after this long. */
  readonly timeout: number
  readonly cwd?: string | undefined
}

export const runClark = (args: ReadonlyArray<string>, options: RunOptions) =>
  new Promise<Outcome>((resolve) => {
    execFile(
      process.execPath,
      clarkArgs(args),
      { cwd: options.cwd ?? root, env: options.env, timeout: options.timeout, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resolve({ code, signal: error?.signal ?? null, stdout, stderr, output: `${stdout}\n${stderr}` })
      }
    )
  })
