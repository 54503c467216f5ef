/** The marketplace's migration set, one for both dialects. */
import { Migrator } from "@effect/sql"
import catalog from "./migrations/0001_catalog.js"
import accounts from "./migrations/0002_accounts.js"
import curation from "./migrations/0003_curation.js"
import catalogVersion from "./migrations/0004_catalog_version.js"
import idempotencyKeyScope from "./migrations/0005_idempotency_key_scope.js"
import rateLimits from "./migrations/0007_rate_limits.js"
import searchTerms from "./migrations/0008_search_terms.js"
import searchPrefixes from "./migrations/0009_search_prefixes.js"
import submissions from "./migrations/0010_submissions.js"
import pagesCredentialsAudit from "./migrations/0012_pages_credentials_audit.js"
import publishers from "./migrations/0013_publishers.js"
import deferredCatalogBump from "./migrations/0014_deferred_catalog_bump.js"
import searchPages from "./migrations/0015_search_pages.js"

// 0006 and 0011 are not used: the search table was written as 0006 beside 0007 and landed after it (so it is
// 0008), and publishers were written as 0011 and landed after 0012 (so they are 0013). The migrator runs only
// ids above the highest one a database has run.
export const loader = Migrator.fromRecord({
  "0001_catalog": catalog,
  "0002_accounts": accounts,
  "0003_curation": curation,
  "0004_catalog_version": catalogVersion,
  "0005_idempotency_key_scope": idempotencyKeyScope,
  "0007_rate_limits": rateLimits,
  "0008_search_terms": searchTerms,
  "0009_search_prefixes": searchPrefixes,
  "0010_submissions": submissions,
  "0012_pages_credentials_audit": pagesCredentialsAudit,
  "0013_publishers": publishers,
  "0014_deferred_catalog_bump": deferredCatalogBump,
  "0015_search_pages": searchPages
})

export const migrate = Migrator.make({})({ loader, table: "clark_migrations" })
