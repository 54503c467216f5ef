/**
 * zod, the MCP SDK's schema library, without its compiled ("JIT") object parser: set here, before the SDK's
 * schemas are made (zod reads the setting when a schema is built), so this module is imported before the SDK by
 * every module that imports it.
 *
 * Why: the SDK parses every message a service sends against a union (request, notification, result, error)
 * whose first members fail for a tool's answer, and the compiled parser reports each failed key as
 * `{ ...issue, path }`; on this V8 a spread followed by a property makes a new hidden class per object (two per
 * tool call), old-generation garbage only a full collection frees (docs/decisions.md, "Widget presses: hidden
 * classes made per press"). The interpreted parser answers the same.
 */
import * as z from "zod/v4"

z.config({ jitless: true })
