/** The node's SQLite database under the data dir: WAL, foreign keys, migrations. */
import { Migrator, SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import conversations from "./migrations/0001_conversations.js"
import preferences from "./migrations/0002_preferences.js"
import artifacts from "./migrations/0003_artifacts.js"
import packages from "./migrations/0004_packages.js"
import connectionStates from "./migrations/0005_connection_states.js"
import taskApprovals from "./migrations/0006_task_approvals.js"
import widgetInstances from "./migrations/0007_widget_instances.js"
import widgetPresses from "./migrations/0008_widget_presses.js"
import artifactWrites from "./migrations/0009_artifact_writes.js"
import inbox from "./migrations/0010_inbox.js"
import deletionPermits from "./migrations/0011_deletion_permits.js"
import jobs from "./migrations/0012_jobs.js"
import artifactStarters from "./migrations/0014_artifact_starters.js"
import offeredActions from "./migrations/0015_offered_actions.js"
import artifactTotals from "./migrations/0016_artifact_totals.js"
import * as Direct from "./Direct.js"
import * as Names from "./Names.js"
import * as WalCheckpoints from "./WalCheckpoints.js"

// 0013 is not used: offered actions were written as 0013 and landed after 0014, and the migrator runs only ids
// above the highest one a database has run.
const loader = Migrator.fromRecord({
  "0001_conversations": conversations,
  "0002_preferences": preferences,
  "0003_artifacts": artifacts,
  "0004_packages": packages,
  "0005_connection_states": connectionStates,
  "0006_task_approvals": taskApprovals,
  "0007_widget_instances": widgetInstances,
  "0008_widget_presses": widgetPresses,
  "0009_artifact_writes": artifactWrites,
  "0010_inbox": inbox,
  "0011_deletion_permits": deletionPermits,
  "0012_jobs": jobs,
  "0014_artifact_starters": artifactStarters,
  "0015_offered_actions": offeredActions,
  "0016_artifact_totals": artifactTotals
})

export const layer = (dataDir: string): Layer.Layer<SqlClient.SqlClient> =>
  Layer.merge(
    Layer.effectDiscard(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // NORMAL is durable in WAL mode except for the last commits before a power loss.
      yield* sql`PRAGMA synchronous = NORMAL`
      yield* sql`PRAGMA foreign_keys = ON`
      yield* Migrator.make({})({ loader, table: "clark_migrations" })
    }).pipe(Effect.orDie)
    ),
    // Checkpoints on a worker thread, not inside a commit on the event loop (WalCheckpoints.ts).
    WalCheckpoints.layer({ filename: path.join(dataDir, "node.db") })
  ).pipe(
    Layer.provideMerge(
      Layer.unwrapEffect(Effect.sync(() => {
        fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
        return SqliteClient.layer({
          filename: path.join(dataDir, "node.db"),
          transformResultNames: Direct.resultNames,
          transformQueryNames: Names.queryNames
        })
      }))
    ),
    Layer.orDie
  )
