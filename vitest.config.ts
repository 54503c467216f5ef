import * as fs from "node:fs"
import { availableParallelism } from "node:os"
import * as path from "node:path"
import { defineConfig } from "vitest/config"

/** Every test file, relative to the repository. */
const testFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    return entry.isDirectory() ? testFiles(file) : entry.name.endsWith(".test.ts") ? [file] : []
  })

/**
 * Files with a `layer(...)` block of @effect/vitest: the TestClock of such a block outlives its file (a later file's
 * `it.effect` in the same module graph was handed that very clock, already moved on), so these run in a module
 * graph of their own (docs/decisions.md, "Test run time").
 */
const sharedLayerFiles = testFiles("test").filter((file) =>
  /import\s*\{[^}]*\blayer\b[^}]*\}\s*from\s*"@effect\/vitest"/.test(fs.readFileSync(file, "utf8"))
)

export default defineConfig({
  test: {
    // The CLI tests run the compiled `clark`: built here when a source is newer than the build.
    globalSetup: ["./test/support/BuildCli.ts"],
    reporters: ["default", "./test/support/SummaryReporter.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Vitest runs cores - 1 files at once: one at a time on a 2-core machine, while much of a file's time is spent
    // waiting on child processes, PostgreSQL and sockets. Files share no state (temporary dirs, a database of their
    // own per suite, ports the OS picks), so two run side by side: test/marketplace/http with the help pages took
    // 198 s with one, 138 s with two, 154 s with three (docs/decisions.md, "Test run time").
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { concurrent: false },
    // One module graph per worker rather than per file: loading effect, the platform and our modules again for each
    // of 150 files was more than half of the run (docs/decisions.md, "Test run time"). Set here, not in a project:
    // a project's own `isolate: false` was not honoured (each file still got a fresh worker).
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: sharedLayerFiles
        }
      },
      { extends: true, test: { name: "own-graph", include: sharedLayerFiles, isolate: true } }
    ]
  }
})
