import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The CLI tests run the compiled `clark`: built here when a source is newer than the build.
    globalSetup: ["./test/support/BuildCli.ts"],
    setupFiles: ["./test/support/FreshDispatcher.ts"],
    reporters: ["default", "./test/support/SummaryReporter.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Vitest runs cores - 1 files at once: one at a time on a 2-core machine, while much of a file's time is spent
    // waiting on child processes, PostgreSQL and sockets. Files share no state (temporary dirs, a database of their
    // own per suite, ports the OS picks), so two run side by side: test/marketplace/http with the help pages took
    // 198 s with one, 138 s with two, 154 s with three (docs/decisions.md, "Test run time").
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // One module graph per worker rather than per file: loading effect, the platform and our modules again for
    // each of 150 files was more than half of the run (docs/decisions.md, "Test run time"). Files keep no state
    // in modules; the one process-wide thing they shared, fetch's keep-alive pool, is renewed per file.
    isolate: false,
    sequence: { concurrent: false }
  }
})
