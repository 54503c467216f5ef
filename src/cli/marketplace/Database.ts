/** The marketplace database of `--database`, else of `MARKETPLACE_DATABASE`; loaded only by the commands that use it. */
import { Layer, Option } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"

export const databaseLayer = (option: Option.Option<string>) =>
  Option.match(option, {
    onNone: () => Database.layerConfig,
    onSome: (value) => {
      const url = Database.parseDatabaseUrl(value)
      return url === undefined
        ? Layer.die(new Error("--database must be sqlite:PATH or postgres://…"))
        : Database.layer(url)
    }
  })
