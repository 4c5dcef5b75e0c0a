/**
 * Creating a directory's identity (object-identity.ts) against crashes. The file system calls of a
 * first load are recorded: the identity file must be created and made durable (a directory fsync)
 * before any file bound to it is written. A crash right after its creation (before that fsync: a
 * process crash keeps the file, a power loss may drop it) or between it and the first file must
 * leave a directory that opens, with nothing lost and every later snapshot bound to the identity
 * that stays.
 */
import { basename, join } from "node:path";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";

/** Every call's `<op> <name>` while recording; `fail` makes the next call of that op on an identity fail. */
const events: string[] = [];
const plan: { fail: "create" | "syncdir" | undefined } = { fail: undefined };
const eio = (op: string) => Object.assign(new Error(`EIO: i/o error, ${op}`), { code: "EIO" });
vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs/promises")>();
  const writeFile: typeof fs.writeFile = async (...args) => {
    const name = basename(String(args[0]));
    if (plan.fail === "create" && name.startsWith("ident-")) {
      plan.fail = undefined;
      throw eio("open");
    }
    await fs.writeFile(...args);
    events.push(`create ${name}`);
  };
  const rename: typeof fs.rename = async (...args) => {
    await fs.rename(...args);
    events.push(`create ${basename(String(args[1]))}`);
  };
  const open: typeof fs.open = async (...args) => {
    const path = String(args[0]);
    const existed = await fs.stat(path).then(
      () => true,
      () => false,
    );
    const handle = await fs.open(...args);
    if (!existed) events.push(`create ${basename(path)}`);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      if (!(await fs.stat(path)).isDirectory()) return sync();
      if (plan.fail === "syncdir" && (await fs.readdir(path)).some((n) => n.startsWith("ident-"))) {
        plan.fail = undefined;
        throw eio("fsync");
      }
      await sync();
      events.push(`syncdir ${basename(path)}`);
    };
    return handle;
  };
  const mocked = { ...fs, open, rename, writeFile };
  return { ...mocked, default: mocked };
});

const { mkdtemp, readdir, rm, writeFile } = await import("node:fs/promises");
const { tmpdir } = await import("node:os");
const { openFilePersistence } = await import("../../src/durability/file-persistence");
const { crc32 } = await import("../../src/durability/crc32");
const { snapshotName } = await import("../../src/durability/file-layout");
const { nameCrcOf } = await import("../../src/durability/snapshot-name-crc");
const { kvRecord, range } = await import("./adapter-contract");
const { unbindLog } = await import("./directory-files");

const root = await mkdtemp(join(tmpdir(), "actorstore-identity-crash-"));
let counter = 0;
const freshDir = () => join(root, `d-${++counter}`);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
beforeEach(() => {
  events.length = 0;
  plan.fail = undefined;
});

const image = (n: number) => new Uint8Array(500).fill(n);
const identities = async (dir: string) => (await readdir(dir)).filter((n) => n.startsWith("ident-"));

/** Opens `dir`, commits up to `to` and writes a snapshot of it; then opens it again and checks it. */
async function writeAndReopen(dir: string, from: number, to: number): Promise<void> {
  const adapter = await openFilePersistence(dir);
  const loaded = await adapter.load();
  expect(loaded.lastSeq).toBe(from - 1);
  await adapter.append(range(from, to).map((s) => kvRecord(s)));
  await adapter.writeSnapshot({ seq: to, timeMs: to * 1000 }, image(to));
  await adapter.close();
  const again = await openFilePersistence(dir);
  const result = await again.load();
  expect(result.lastSeq).toBe(to);
  expect(result.snapshots.map((s) => s.seq)).toContain(to);
  expect(await again.readSnapshot(to)).toEqual(image(to));
  await again.close();
}

describe("identity creation against crashes", () => {
  it("the identity is created and made durable before any other file of the directory", async () => {
    const dir = freshDir();
    await writeAndReopen(dir, 1, 3);
    const name = basename(dir);
    const created = events.findIndex((e) => /^create ident-/.test(e));
    const synced = events.findIndex((e, i) => i > created && e === `syncdir ${name}`);
    const firstOther = events.findIndex((e) => /^create (log-|snap-|head-|meta)/.test(e));
    expect(created).toBeGreaterThanOrEqual(0);
    expect(synced).toBeGreaterThan(created);
    expect(firstOther).toBeGreaterThan(synced);
  });

  for (const lost of [false, true])
    it(`a crash after creating the identity, before its directory fsync (${lost ? "a power loss drops it" : "a process crash keeps it"}), leaves a directory that opens`, async () => {
      const dir = freshDir();
      plan.fail = "syncdir";
      const adapter = await openFilePersistence(dir);
      await expect(adapter.load()).rejects.toMatchObject({ code: "EIO" });
      const [created] = await identities(dir);
      expect(created).toBeDefined();
      // Nothing bound to it was written.
      expect((await readdir(dir)).filter((n) => /^(log-|snap-|head-|meta)/.test(n))).toEqual([]);
      if (lost) await rm(join(dir, created as string));
      await writeAndReopen(dir, 1, 4);
      const kept = await identities(dir);
      expect(kept).toHaveLength(1);
      if (!lost) expect(kept).toEqual([created]);
    });

  it("an identity that cannot be created fails the load and changes nothing; the next load creates it", async () => {
    const dir = freshDir();
    plan.fail = "create";
    const adapter = await openFilePersistence(dir);
    await expect(adapter.load()).rejects.toMatchObject({ code: "EIO" });
    expect(await identities(dir)).toEqual([]);
    await writeAndReopen(dir, 1, 2);
  });

  for (const lost of [false, true])
    it(`adopting an identity for an older version's directory, interrupted before its fsync (${lost ? "dropped" : "kept"}), keeps every file`, async () => {
      const dir = freshDir();
      // An older version's directory: a log of 5 commits and an image of seq 4 without identity.
      const older = await openFilePersistence(dir);
      await older.load();
      await older.append(range(1, 5).map((s) => kvRecord(s)));
      await older.close();
      await unbindLog(dir);
      for (const name of await identities(dir)) await rm(join(dir, name));
      await writeFile(join(dir, snapshotName(4, 4000, nameCrcOf(crc32(image(4)), 4, 4000))), image(4));

      plan.fail = "syncdir";
      const adapter = await openFilePersistence(dir);
      await expect(adapter.load()).rejects.toMatchObject({ code: "EIO" });
      const [adopted] = await identities(dir);
      expect(adopted).toMatch(/^ident-[0-9a-f]{32}-0000000000000005$/);
      if (lost) await rm(join(dir, adopted as string));
      const again = await openFilePersistence(dir);
      const result = await again.load();
      expect(result.snapshots.map((s) => s.seq)).toEqual([4]);
      expect(await again.readSnapshot(4)).toEqual(image(4));
      await again.close();
      await writeAndReopen(dir, 6, 8);
    });
});
