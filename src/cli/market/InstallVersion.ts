/**
 * `clark market install NAME --version V`, as the issue documents it: @effect/cli
 * answers `--version` anywhere with the program's own version, so before
 * parsing, the flag given after `market install` is folded into the npm-style
 * `NAME@V` the command reads.
 */
export const foldInstallVersion = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const start = argv.findIndex((arg, i) => arg === "market" && argv[i + 1] === "install")
  if (start < 0) return argv
  const head = argv.slice(0, start + 2)
  const rest = [...argv.slice(start + 2)]
  let version: string | undefined
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    if (arg === "--version" && i + 1 < rest.length) {
      version = rest[i + 1]
      rest.splice(i, 2)
      break
    }
    if (arg.startsWith("--version=")) {
      version = arg.slice("--version=".length)
      rest.splice(i, 1)
      break
    }
  }
  if (version === undefined) return argv
  // Options taking a value, so their value is not mistaken for the package name.
  const valued = new Set(["--url", "--token"])
  const nameAt = rest.findIndex((arg, i) => !arg.startsWith("-") && !valued.has(rest[i - 1] ?? ""))
  if (nameAt < 0) return argv
  rest[nameAt] = `${rest[nameAt]}@${version}`
  return [...head, ...rest]
}
