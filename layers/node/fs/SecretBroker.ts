/**
 * SecretBroker on a file of the data dir: `<dataDir>/secrets.json`, mode 0600
 * in a 0700 dir. The file is read on every `get` (it is small, and a file that
 * was damaged or opened up to others after start is noticed at once) and
 * replaced atomically on every write: a new file is written, flushed to disk,
 * renamed over the old one and the rename itself flushed, so an acknowledged
 * `put` survives a crash and a crash never leaves half a file.
 *
 * A file readable or writable by others, not a regular file, not the node's
 * own, or not parseable makes the broker refuse with `SecretStoreUnavailable`
 * (it is never repaired or overwritten, which would lose the other secrets).
 * Reasons never carry the file's contents: parser messages quote the text they
 * choke on, so they are replaced by fixed words.
 */
import { Effect, Layer, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type Secret, SecretBroker, SecretStoreUnavailable } from "../../../services/node/SecretBroker.js"

export const secretsFileName = "secrets.json"
export const secretsFile = (dataDir: string) => path.join(dataDir, secretsFileName)

const StoredSecret = Schema.Struct({
  value: Schema.Redacted(Schema.String),
  origin: Schema.optional(Schema.String)
})

const SecretsFile = Schema.Struct({
  version: Schema.Literal(1),
  secrets: Schema.Record({ key: Schema.String, value: StoredSecret })
})
type Secrets = typeof SecretsFile.Type["secrets"]

const decodeFile = Schema.decodeUnknown(Schema.parseJson(SecretsFile))
const encodeFile = Schema.encode(Schema.parseJson(SecretsFile, { space: 2 }))

const tempPrefix = `.${secretsFileName}.`
const isTempName = (name: string) => name.startsWith(tempPrefix) && name.endsWith(".tmp")

const unavailable = (reason: string) => new SecretStoreUnavailable({ reason })

/** The code of a file-system failure (ENOSPC, EACCES…), never its message. */
const codeOf = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : "unknown error"

const attempt = <A>(what: string, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (error) => unavailable(`${what} (${codeOf(error)})`) })

const isMissing = (error: unknown) => codeOf(error) === "ENOENT"

/** Mode and owner checks of an existing file; the directory walk stays with the caller. */
const checkFile = (stat: { isFile(): boolean; mode: number; uid: number }) => {
  if (!stat.isFile()) return "the secrets file is not a regular file"
  const mode = stat.mode & 0o777
  if ((mode & 0o077) !== 0) {
    return `the secrets file is open to other users (mode ${mode.toString(8).padStart(4, "0")}, expected 0600)`
  }
  if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
    return "the secrets file belongs to another user"
  }
  return undefined
}

export const make = (dataDir: string) =>
  Effect.gen(function*() {
    const file = secretsFile(dataDir)
    // Writes read, change and replace the whole file: one at a time.
    const writeLock = yield* Effect.makeSemaphore(1)

    yield* attempt("the data dir cannot be created", () => fs.mkdir(dataDir, { recursive: true, mode: 0o700 }))
    // A crash between writing a temporary file and renaming it leaves the file behind, secret inside.
    yield* attempt("the data dir cannot be listed", async () => {
      for (const name of await fs.readdir(dataDir)) {
        if (isTempName(name)) await fs.rm(path.join(dataDir, name), { force: true })
      }
    })

    /** Every secret, or none when the file does not exist yet. */
    const readAll: Effect.Effect<Secrets, SecretStoreUnavailable> = Effect.gen(function*() {
      // lstat: a symbolic link is refused rather than followed somewhere else.
      const stat = yield* Effect.tryPromise({ try: () => fs.lstat(file), catch: (error) => error }).pipe(
        Effect.map(Option.some),
        Effect.catchAll((error) =>
          isMissing(error)
            ? Effect.succeed(Option.none())
            : Effect.fail(unavailable(`the secrets file cannot be examined (${codeOf(error)})`))
        )
      )
      if (Option.isNone(stat)) return {}
      const problem = checkFile(stat.value)
      if (problem !== undefined) return yield* Effect.fail(unavailable(problem))
      const text = yield* attempt("the secrets file cannot be read", () => fs.readFile(file, "utf8"))
      const decoded = yield* Effect.mapError(decodeFile(text), () => unavailable("the secrets file cannot be parsed"))
      return decoded.secrets
    })

    /** Replaces the file: temp file (0600, exclusive), fsync, rename, fsync of the dir. */
    const writeAll = (secrets: Secrets) =>
      Effect.gen(function*() {
        const text = yield* Effect.mapError(
          encodeFile({ version: 1, secrets }),
          () => unavailable("the secrets cannot be encoded")
        )
        const temp = path.join(dataDir, `${tempPrefix}${randomBytes(6).toString("hex")}.tmp`)
        const written = attempt("the secrets file cannot be written", async () => {
          const handle = await fs.open(temp, "wx", 0o600)
          try {
            await handle.writeFile(text, "utf8")
            await handle.sync()
          } finally {
            await handle.close()
          }
          await fs.rename(temp, file)
        })
        yield* written.pipe(
          Effect.tapError(() => Effect.promise(() => fs.rm(temp, { force: true }).catch(() => undefined)))
        )
        // The rename is durable only once the directory entry is on disk.
        yield* attempt("the data dir cannot be flushed", async () => {
          const dir = await fs.open(dataDir, "r")
          try {
            await dir.sync()
          } finally {
            await dir.close()
          }
        })
      })

    const update = <A>(change: (secrets: Secrets) => readonly [A, Secrets | undefined]) =>
      writeLock.withPermits(1)(
        Effect.gen(function*() {
          const [result, next] = change(yield* readAll)
          if (next !== undefined) yield* writeAll(next)
          return result
        })
      )

    return SecretBroker.of({
      get: (name) =>
        Effect.map(readAll, (secrets) =>
          Option.map(
            Option.fromNullable(Object.hasOwn(secrets, name) ? secrets[name] : undefined),
            (stored): Secret => (stored.origin === undefined ? { value: stored.value } : stored)
          )),
      list: (prefix) =>
        Effect.map(readAll, (secrets) =>
          Object.keys(secrets)
            .filter((name) => name.startsWith(prefix))
            .sort()
            .map((name) => {
              const stored = secrets[name]!
              return { name, secret: stored.origin === undefined ? { value: stored.value } : stored }
            })),
      put: (name, secret) =>
        update((secrets) => [
          undefined,
          {
            ...secrets,
            [name]: secret.origin === undefined ? { value: secret.value } : { value: secret.value, origin: secret.origin }
          }
        ]),
      remove: (name) =>
        update((secrets) => {
          if (!Object.hasOwn(secrets, name)) return [false, undefined]
          const { [name]: _removed, ...rest } = secrets
          return [true, rest]
        })
    })
  })

export const layer = (dataDir: string) => Layer.effect(SecretBroker, make(dataDir)).pipe(Layer.orDie)
