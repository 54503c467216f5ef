/**
 * The environment a service process gets, built from nothing. A service is third-party code: it must not
 * see the node's local token, the app secret, model or provider keys (`CC_*`), the map key, nor anything
 * else the node's own environment happens to hold. It gets a search path, a language, a home of its own
 * (its data folder), who it is, and the values its grants give it (its own credentials, by name).
 */
import "./ZodJitless.js" // before the SDK: its schemas are made when it loads
import { DEFAULT_INHERITED_ENV_VARS } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as path from "node:path"

/** Names the runtime itself sets; a grant may not replace them. */
const reserved = new Set(["PATH", "HOME", "LANG", "TMPDIR", "CLARK_PACKAGE_ID", "CLARK_PACKAGE_DATA_DIR"])

/**
 * Names no grant may use: ones that change how Node, the loader or the shell runs the service (`NODE_OPTIONS`
 * would let a value inject code into the process), and the node's own namespace.
 */
const refusedName = /^(?:NODE_|npm_|LD_|DYLD_|CC_|CLARK_)|^(?:BASH_ENV|ENV|SHELLOPTS|PS4|IFS)$/

/** Only plain upper-case names: what shells and SDKs read, and nothing that could be mistaken for another. */
const grantName = /^[A-Z][A-Z0-9_]{0,63}$/

export const fallbackPath = "/usr/local/bin:/usr/bin:/bin"

/** The folder a package keeps its data in under the runtime's data folder; a scoped name stays one segment. */
export const dataFolderOf = (root: string, packageId: string) => path.join(root, encodeURIComponent(packageId))

export interface EnvInput {
  readonly packageId: string
  readonly dataFolder: string
  /** The node's PATH and LANG: the only values taken from its environment. */
  readonly inheritedPath: string | undefined
  readonly inheritedLang: string | undefined
  /** Values the package's grants give it (already resolved from the secret broker). */
  readonly grants: Readonly<Record<string, string>>
}

export interface ServiceEnv {
  readonly env: Record<string, string>
  /** Grant names that were refused (for the log: names only). */
  readonly refused: ReadonlyArray<string>
}

export const serviceEnv = (input: EnvInput): ServiceEnv => {
  const env: Record<string, string> = {}
  const refused: Array<string> = []
  for (const [name, value] of Object.entries(input.grants)) {
    if (!grantName.test(name) || reserved.has(name) || refusedName.test(name) || value.includes("\0")) refused.push(name)
    else env[name] = value
  }
  env.PATH = input.inheritedPath !== undefined && input.inheritedPath !== "" ? input.inheritedPath : fallbackPath
  env.HOME = input.dataFolder
  env.TMPDIR = path.join(input.dataFolder, ".tmp")
  env.LANG = input.inheritedLang !== undefined && /^[A-Za-z0-9_.@-]{1,64}$/.test(input.inheritedLang) ? input.inheritedLang : "C.UTF-8"
  env.CLARK_PACKAGE_ID = input.packageId
  env.CLARK_PACKAGE_DATA_DIR = input.dataFolder
  return { env, refused }
}

/**
 * The SDK's stdio transport adds a few of the node's variables (LOGNAME, SHELL, TERM, USER) under the ones
 * it is given. An explicitly undefined value makes Node's spawn leave a name out, so every such name the
 * service should not have is given as undefined.
 */
export const forSpawn = (env: Record<string, string>): Record<string, string> => {
  const out: Record<string, string | undefined> = { ...env }
  for (const name of DEFAULT_INHERITED_ENV_VARS) if (!(name in env)) out[name] = undefined
  return out as Record<string, string>
}
