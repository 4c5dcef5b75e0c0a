/**
 * Repair's copies are durable before it changes anything: each copy is fsynced (bytes, then its
 * directory's entry) before the original is cut or removed, so a power loss during a repair cannot
 * take both the damaged file and its copy. The file system calls are recorded in order.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

const events: string[] = [];
vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs/promises")>();
  const record =
    <A extends unknown[], R>(name: string, f: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await f(...args);
      events.push(`${name} ${String(args[name === "copyFile" ? 1 : 0])}`);
      return result;
    };
  const open: typeof fs.open = async (...args) => {
    const handle = await fs.open(...args);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      await sync();
      events.push(`sync ${String(args[0])}`);
    };
    return handle;
  };
  return {
    ...fs,
    default: { ...fs, open },
    open,
    copyFile: record("copyFile", fs.copyFile),
    rm: record("rm", fs.rm),
    truncate: record("truncate", fs.truncate),
  };
});

const { mkdtemp, readdir, readFile, rm, writeFile } = await import("node:fs/promises");
const { tmpdir } = await import("node:os");
const { runInspect } = await import("../../src/cli/inspect-commands");
const { openFilePersistence } = await import("../../src/durability/file-persistence");
const { ObjectStorage } = await import("../../src/index");

const root = await mkdtemp(join(tmpdir(), "actorstore-repair-sync-"));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("actorstore-inspect repair: durable copies", () => {
  it("every copy and its directory entry are fsynced before the original is cut or removed", async () => {
    const dir = join(root, "object");
    const storage = await ObjectStorage.open({ persistence: await openFilePersistence(dir, { segmentBytes: 400 }) });
    for (let i = 0; i < 30; i++) {
      await storage.put(`k${i}`, i);
      await storage.sync();
    }
    await storage.close();
    const segments = (await readdir(dir)).filter((n) => n.endsWith(".seg")).sort();
    const damagedName = segments[segments.length - 2] as string; // older than the newest: later ones go too
    const bytes = await readFile(join(dir, damagedName));
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0x04;
    await writeFile(join(dir, damagedName), bytes);

    events.length = 0;
    const out: string[] = [];
    const code = await runInspect([dir, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) });
    expect(code, out.join("\n")).toBe(0);
    const backupDir = join(dir, (await readdir(dir)).find((n) => n.startsWith("repair-")) as string);
    const changed = events.filter((e) => /^(rm|truncate) .*\.seg$/.test(e));
    expect(changed.length).toBeGreaterThanOrEqual(2); // the damaged segment cut, the newest removed
    for (const change of changed) {
      const name = change.slice(change.lastIndexOf("/") + 1);
      const at = events.indexOf(change);
      const copy = join(backupDir, name);
      const copied = events.indexOf(`copyFile ${copy}`);
      const synced = events.indexOf(`sync ${copy}`);
      const entry = events.indexOf(`sync ${backupDir}`, synced);
      expect(copied, `${name} was copied`).toBeGreaterThanOrEqual(0);
      expect(synced, `${name}'s copy was fsynced after it was written`).toBeGreaterThan(copied);
      expect(entry, `the entry of ${name}'s copy was fsynced`).toBeGreaterThan(synced);
      expect(at, `${name} changed only after its copy was durable`).toBeGreaterThan(entry);
    }
    expect(events.indexOf(`sync ${dir}`)).toBeGreaterThanOrEqual(0); // the backup directory's own entry
  });
});
