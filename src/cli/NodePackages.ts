/**
 * `clark node packages list|show|add-local` and `clark node install`: the node's package directory from the
 * command line. The CLI is a machine surface: `install` asks for the install, and the person approves it on
 * their own surface (the app's inbox); the command waits for that decision unless told not to.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { load } from "./Lazy.js"
import { connection } from "./NodeClient.js"

const packages = () => import("./node/Packages.js")

const listOptions = {
  ...connection,
  query: Options.text("query").pipe(Options.withDescription("only packages whose name or description has these words"), Options.optional)
}
export type ListOptions = Command.Command.ParseConfig<typeof listOptions>

const list = Command.make("list", listOptions, (options) => load(packages, (Packages) => Packages.list(options))).pipe(
  Command.withDescription("List the packages the node can install: local folders, then the marketplace's")
)

const packageArg = Args.text({ name: "PACKAGE" }).pipe(Args.withDescription("the package's id (its npm name)"))

const showOptions = { ...connection, packageId: packageArg }
export type ShowOptions = Command.Command.ParseConfig<typeof showOptions>

const show = Command.make("show", showOptions, (options) => load(packages, (Packages) => Packages.show(options))).pipe(
  Command.withDescription("Show one package: version, digest, facets, permissions and what is installed")
)

const addLocalOptions = {
  ...connection,
  folder: Args.directory({ name: "PATH", exists: "yes" }).pipe(Args.withDescription("the package's folder (its package.json has a clark manifest)"))
}
export type AddLocalOptions = Command.Command.ParseConfig<typeof addLocalOptions>

const addLocal = Command.make("add-local", addLocalOptions, (options) => load(packages, (Packages) => Packages.addLocal(options)))
  .pipe(Command.withDescription("List a folder on this computer as an installable package"))

export const packagesCommand = Command.make("packages").pipe(
  Command.withDescription("The node's package directory"),
  Command.withSubcommands([list, show, addLocal])
)

const installOptions = {
  ...connection,
  noWait: Options.boolean("no-wait").pipe(Options.withDescription("print the approval's id and return without waiting for the decision")),
  coordinate: Args.text({ name: "PACKAGE[@VERSION]" }).pipe(Args.withDescription("the package to install, as the marketplace's install command names it"))
}
export type InstallOptions = Command.Command.ParseConfig<typeof installOptions>

export const install = Command.make("install", installOptions, (options) => load(packages, (Packages) => Packages.install(options)))
  .pipe(Command.withDescription(
    "Ask to install a package; the person approves it in the app. Exits 1 unless it was installed"
  ))
