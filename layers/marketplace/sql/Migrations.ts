/** The marketplace's migration set, one for both dialects. */
import { Migrator } from "@effect/sql"
import catalog from "./migrations/0001_catalog.js"
import accounts from "./migrations/0002_accounts.js"
import curation from "./migrations/0003_curation.js"
import catalogVersion from "./migrations/0004_catalog_version.js"
import searchTerms from "./migrations/0006_search_terms.js"

export const loader = Migrator.fromRecord({
  "0001_catalog": catalog,
  "0002_accounts": accounts,
  "0003_curation": curation,
  "0004_catalog_version": catalogVersion,
  "0006_search_terms": searchTerms
})

export const migrate = Migrator.make({})({ loader, table: "clark_migrations" })
