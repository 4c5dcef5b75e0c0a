import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    setupFiles: ["test/setup/fast-check.ts"],
    // Each provisions something tests need (a browser, a server); add yours to the array.
    globalSetup: ["test/setup/chromium.ts", "test/setup/ceph-s3.ts"],
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
