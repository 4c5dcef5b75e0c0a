/**
 * The benchmark suite still runs: every workload on actorstore and raw sql.js at tiny sizes, plus
 * the actorstore-only measurements, with the results in the shape bench/results/latest.json has.
 * No timing is asserted anywhere: only that each number is there and sane.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { presetConfig, runBenchmarks, writeResults } from "../../bench/lib/bench";
import type { BenchResults } from "../../bench/lib/results";
import { WORKLOADS } from "../../bench/lib/suite";

const positiveFinite = (x: number): boolean => Number.isFinite(x) && x > 0;

describe("bench: quick suite on actorstore and raw sql.js", () => {
  it("runSuite: every workload runs on both systems and returns sane numbers and the JSON shape", async () => {
    const config = {
      ...presetConfig("quick", () => {}),
      sizes: [200],
      rounds: 2,
      warmupRounds: 0,
      roundTargetMs: 1,
      systems: ["actorstore", "raw-sqljs"] as const,
      recovery: { databaseBytes: 200_000, batches: 50, rounds: 1 },
      logBatches: 5,
      memoryKeys: undefined,
    };
    const results: BenchResults = await runBenchmarks({ ...config, systems: [...config.systems] });

    expect(results.workloads.map((w) => w.workload)).toEqual(WORKLOADS.map((w) => w.name));
    for (const w of results.workloads) {
      expect(w.size).toBe(200);
      expect(w.results.map((m) => m.system)).toEqual(["actorstore", "raw-sqljs"]);
      for (const m of w.results) {
        expect(m.samples).toHaveLength(2);
        expect(m.n).toBeGreaterThan(0);
        expect(m.samples.every(positiveFinite), `${w.workload} ${m.system}`).toBe(true);
        expect(m.summary.min).toBeLessThanOrEqual(m.summary.median);
        expect(m.summary.median).toBeLessThanOrEqual(m.summary.max);
      }
    }
    expect(results.recovery.map((r) => r.persistence)).toEqual(["memory", "file"]);
    for (const r of results.recovery) {
      expect(r.recoveryMs.every(positiveFinite)).toBe(true);
      expect(r.restoreMs.every(positiveFinite)).toBe(true);
      expect(r.databaseBytes).toBeGreaterThanOrEqual(200_000);
    }
    expect(results.logCost.length).toBeGreaterThan(0);
    for (const c of results.logCost) {
      expect(c.logBytesPerBatch).toBeGreaterThan(0);
      expect(c.ratio).toBeGreaterThan(0);
    }
    // Targets against peers that did not run are N/A, never a silent PASS.
    const byId = new Map(results.targets.map((t) => [t.id, t]));
    expect(byId.get("get-cached-vs-workerd")?.status).toBe("N/A");
    expect(["PASS", "FAIL"]).toContain(byId.get("get-cached-vs-raw")?.status);
    expect(["PASS", "FAIL"]).toContain(byId.get("log-bytes")?.status);

    const directory = await mkdtemp(join(tmpdir(), "bench-smoke-"));
    try {
      const text = await writeResults(results, directory);
      expect(text).toContain("get-cached");
      const json = JSON.parse(await readFile(join(directory, "latest.json"), "utf8")) as BenchResults;
      expect(Object.keys(json).sort()).toEqual(["logCost", "memory", "meta", "recovery", "targets", "workloads"]);
      expect(json.meta.systems).toEqual(["actorstore", "raw-sqljs"]);
      expect(await readFile(join(directory, "latest.md"), "utf8")).toMatch(/\| keys \| actorstore/);
      expect(await readFile(join(directory, "throughput.svg"), "utf8")).toMatch(/^<svg[\s\S]*<\/svg>$/);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
