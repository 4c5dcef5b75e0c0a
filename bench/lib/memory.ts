/**
 * Memory per 100k keys: each system is measured by `bench/memory-probe.ts` in a fresh process.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { SystemName } from "../systems/system";

/** What the probe prints. */
export interface MemoryProbeResult {
  system: SystemName;
  keys: number;
  /** keys × (12-byte key + 100-byte value). */
  rawBytes: number;
  /** Resident set growth over the empty store, after filling and a full GC. */
  rssBytes: number;
  /** Largest resident set growth seen while filling. */
  peakRssBytes: number;
  /** Growth of V8 heap + external memory (ArrayBuffers, sql.js's WASM heap); NaN for workerd. */
  heapBytes: number;
  /** actorstore: bytes charged to the read cache after trimming to its soft limit. */
  cacheBytes: number | undefined;
  note: string;
}

const probePath = fileURLToPath(new URL("../memory-probe.ts", import.meta.url));

/** Runs the probe for `system` in a child process. */
export function probeMemory(
  system: SystemName,
  keys: number,
  cacheSoftLimitBytes?: number,
): Promise<MemoryProbeResult> {
  const extra = cacheSoftLimitBytes === undefined ? [] : [String(cacheSoftLimitBytes)];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--expose-gc", "--import", "tsx", probePath, system, String(keys), ...extra],
      { maxBuffer: 1 << 20, timeout: 300_000 },
      (error, stdout, stderr) => {
        if (error !== null) {
          reject(new Error(`memory probe for ${system} failed: ${error.message}\n${stderr}`));
          return;
        }
        const line = stdout.trim().split("\n").pop() ?? "";
        try {
          const parsed = JSON.parse(line) as MemoryProbeResult;
          // JSON has no NaN: the probe's NaN heap (workerd) arrives as null.
          resolve({ ...parsed, heapBytes: parsed.heapBytes ?? Number.NaN, cacheBytes: parsed.cacheBytes ?? undefined });
        } catch {
          reject(new Error(`memory probe for ${system} printed no result: ${stdout}\n${stderr}`));
        }
      },
    );
  });
}
