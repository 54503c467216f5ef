import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The CLI tests run the compiled `clark`: built here when a source is newer than the build.
    globalSetup: ["./test/support/BuildCli.ts"],
    reporters: ["default", "./test/support/SummaryReporter.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    sequence: { concurrent: false }
  }
})
