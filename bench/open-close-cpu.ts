/**
 * CPU time of opening and closing a small directory (`ObjectStorage.open({ directory })`, then
 * `close()`), with every checkout loaded into one process and their rounds alternating, so that
 * neighbouring rounds see the same machine (separate processes spend most of a short run before
 * their code is optimized):
 *
 *   npx tsx bench/open-close-cpu.ts <rounds> <repo> <repo> …
 *
 * Each checkout first builds a directory of its own with 100 keys (100 awaited `put()`s), then each
 * round opens and closes it; three warm-up rounds are not counted. Prints each checkout's median
 * CPU ms per round (and of the open alone) and the median of its per-round ratio to the first
 * checkout's. CPU time is `process.cpuUsage()` (user + system, every thread of the process).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

interface Storage {
  put(key: string, value: unknown): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}
interface Api {
  ObjectStorage: { open(options: { directory: string }): Promise<Storage> };
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const [roundsArg, ...repos] = process.argv.slice(2);
const rounds = Number(roundsArg);
if (!(rounds > 0) || repos.length < 1) throw new Error("usage: see the module comment");
const WARM_UP = 3;
const checkouts: Array<{ api: Api; directory: string }> = [];
for (const repo of repos) {
  const api = (await import(`${resolve(repo)}/src/index.ts`)) as Api;
  const directory = mkdtempSync(join(tmpdir(), "actorstore-open-close-"));
  const storage = await api.ObjectStorage.open({ directory });
  for (let i = 0; i < 100; i++) await storage.put(`key-${i}`, { n: i, text: "x".repeat(50) });
  await storage.sync();
  await storage.close();
  checkouts.push({ api, directory });
}
const totals: number[][] = repos.map(() => []);
const opens: number[][] = repos.map(() => []);
for (let r = 0; r < rounds + WARM_UP; r++) {
  for (const [i, { api, directory }] of checkouts.entries()) {
    const start = cpuMs();
    const storage = await api.ObjectStorage.open({ directory });
    const opened = cpuMs();
    await storage.close();
    const end = cpuMs();
    if (r >= WARM_UP) {
      totals[i]?.push(end - start);
      opens[i]?.push(opened - start);
    }
  }
}
const base = totals[0] as number[];
for (const [i, repo] of repos.entries()) {
  const own = totals[i] as number[];
  const ratio = median(own.map((t, p) => t / (base[p] as number)));
  console.log(
    `${repo}: ${median(own).toFixed(3)} ms (open ${median(opens[i] as number[]).toFixed(3)} ms), x${ratio.toFixed(3)}`,
  );
}
for (const { directory } of checkouts) rmSync(directory, { recursive: true, force: true });
