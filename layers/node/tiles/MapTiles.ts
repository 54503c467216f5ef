/** Placeholder until the tile fetcher lands: every tile is off. */
import { Effect, Layer } from "effect"
import { nodeError } from "../../../schema/node/Errors.js"
import { MapTiles } from "../../../services/node/MapTiles.js"

export const layer = Layer.succeed(
  MapTiles,
  MapTiles.of({ tile: () => Effect.fail(nodeError("MAP_TILES_OFF", "No tile provider is set")) })
)
