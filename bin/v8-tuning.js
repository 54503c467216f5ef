/**
 * V8 settings for Clark's long-running processes, applied before anything else is loaded (bin/clark.js).
 *
 * Allocation-site pretenuring off: V8 allocates objects of a site whose objects often survived straight into the
 * old generation. Effect's forked fibers make such sites, and each pretenured object, dead as soon as its
 * request ends, keeps the young objects it points to alive through every scavenge until a full collection finds
 * it dead: a widget press promoted ~37 KB, a scavenge copied 0.5-0.7 MB and paused milliseconds
 * (scripts/bench/gc-fork-promotion.ts reproduces it in Effect alone: ~770 KB promoted per scavenge with it,
 * nothing without). docs/decisions.md, "V8's allocation-site pretenuring".
 *
 * Set at run time rather than on the command line because the host app starts `clark` itself, and before the
 * bundle is compiled because V8 keys its code cache by the flags. CLARK_V8_PRETENURING=on keeps V8's default.
 */
import * as v8 from "node:v8"

export const tuneV8 = () => {
  if (process.env.CLARK_V8_PRETENURING !== "on") v8.setFlagsFromString("--no-allocation-site-pretenuring")
}
