/**
 * Log segments opened with `O_DSYNC` (file-io.ts `DirectoryIo.openLog`): each write returns once
 * durable, so the adapter skips its `fdatasync`. Checked here: the flags asked for (created
 * exclusively, or opened for reading and writing), the fallbacks (flushes off, no `O_DSYNC` in the
 * platform's constants, a file system that refuses it with `EINVAL`, remembered), that an error other
 * than `EINVAL` is not swallowed, and, on Linux, the flags of the adapter's real descriptor read back
 * from `/proc/self/fdinfo` together with the bytes the appends left.
 */
import { existsSync } from "node:fs";
import * as fs from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DirectoryIo } from "../../src/durability/file-io";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { ObjectStorage } from "../../src/storage/object-storage";

const root = await fs.mkdtemp(path.join(tmpdir(), "actorstore-dsync-"));
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

let dirs = 0;
const newDir = async () => {
  const dir = path.join(root, `d${dirs++}`);
  await fs.mkdir(dir);
  return dir;
};

const C = fs.constants;

/** `fs` whose `open` is recorded (and may throw for numeric flags), with `constants` replaced. */
function recordingFs(
  opens: Array<string | number>,
  options: { constants?: Record<string, number>; refuseNumeric?: NodeJS.ErrnoException } = {},
): typeof fs {
  return {
    ...fs,
    constants: options.constants ?? fs.constants,
    open: async (file: string, flags?: string | number) => {
      opens.push(flags ?? "r");
      if (typeof flags === "number" && options.refuseNumeric !== undefined) throw options.refuseNumeric;
      return fs.open(file, flags);
    },
  } as typeof fs;
}

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code });

describe("DirectoryIo.openLog", () => {
  it("opens a new segment exclusively and an existing one read-write, both with O_DSYNC when flushes are on", async () => {
    const dir = await newDir();
    const opens: Array<string | number> = [];
    const io = new DirectoryIo(dir, recordingFs(opens), path, true);
    const created = await io.openLog("log-0000000000000001.seg", true);
    expect(created.synced).toBe(true);
    await created.handle.write(new Uint8Array([1, 2, 3]), 0, 3, 0);
    await created.handle.close();
    const again = await io.openLog("log-0000000000000001.seg", false);
    expect(again.synced).toBe(true);
    await again.handle.write(new Uint8Array([4]), 0, 1, 3);
    await again.handle.close();
    expect(opens).toEqual([C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_DSYNC, C.O_RDWR | C.O_DSYNC]);
    expect([...(await fs.readFile(path.join(dir, "log-0000000000000001.seg")))]).toEqual([1, 2, 3, 4]);
    // Created exclusively: a segment that exists is never truncated by a second create.
    await expect(io.openLog("log-0000000000000001.seg", true)).rejects.toMatchObject({ code: "EEXIST" });
    expect((await fs.stat(path.join(dir, "log-0000000000000001.seg"))).size).toBe(4);
  });

  it("asks for no O_DSYNC when flushes are off (allowUnsyncedWrites)", async () => {
    const dir = await newDir();
    const opens: Array<string | number> = [];
    const io = new DirectoryIo(dir, recordingFs(opens), path, false);
    const created = await io.openLog("a.seg", true);
    await created.handle.close();
    const again = await io.openLog("a.seg", false);
    await again.handle.close();
    expect([created.synced, again.synced]).toEqual([false, false]);
    expect(opens).toEqual(["wx", "r+"]);
  });

  it("falls back to write + fdatasync where the platform has no O_DSYNC", async () => {
    for (const constants of [
      { ...C, O_DSYNC: undefined },
      { ...C, O_DSYNC: 0 },
      { ...C, O_EXCL: undefined },
    ]) {
      const dir = await newDir();
      const opens: Array<string | number> = [];
      const io = new DirectoryIo(
        dir,
        recordingFs(opens, { constants: constants as Record<string, number> }),
        path,
        true,
      );
      const created = await io.openLog("a.seg", true);
      await created.handle.close();
      expect(created.synced).toBe(false);
      expect(opens).toEqual(["wx"]);
    }
  });

  it("falls back, for good, when the file system refuses O_DSYNC with EINVAL", async () => {
    const dir = await newDir();
    const opens: Array<string | number> = [];
    const io = new DirectoryIo(dir, recordingFs(opens, { refuseNumeric: errno("EINVAL") }), path, true);
    const created = await io.openLog("a.seg", true);
    await created.handle.close();
    const next = await io.openLog("b.seg", true);
    await next.handle.close();
    expect([created.synced, next.synced]).toEqual([false, false]);
    // One refused try, then plain opens only: the refusal is remembered.
    expect(opens).toEqual([C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_DSYNC, "wx", "wx"]);
  });

  it("does not swallow any other error of the open", async () => {
    const dir = await newDir();
    for (const code of ["EACCES", "ENOSPC", "EMFILE"]) {
      const opens: Array<string | number> = [];
      const io = new DirectoryIo(dir, recordingFs(opens, { refuseNumeric: errno(code) }), path, true);
      await expect(io.openLog("a.seg", true)).rejects.toMatchObject({ code });
      expect(opens).toHaveLength(1);
    }
  });
});

/** The open flags of this process's descriptors whose target is a log segment in `dir` (Linux). */
async function segmentFdFlags(dir: string): Promise<number[]> {
  const flags: number[] = [];
  for (const fd of await fs.readdir("/proc/self/fd")) {
    const target = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => "");
    if (path.dirname(target) !== dir || !/^log-\d{16}\.seg$/.test(path.basename(target))) continue;
    const info = await fs.readFile(`/proc/self/fdinfo/${fd}`, "utf8").catch(() => "");
    const match = /^flags:\s+([0-7]+)$/m.exec(info);
    if (match !== null) flags.push(Number.parseInt(match[1] as string, 8));
  }
  return flags;
}

describe.skipIf(!existsSync("/proc/self/fdinfo"))("the file adapter's log descriptor (Linux)", () => {
  it("appends through a descriptor opened with O_DSYNC, and every confirmed put reads back after a reopen", async () => {
    const dir = path.join(await newDir(), "obj");
    let persistence = await openFilePersistence(dir);
    let storage = await ObjectStorage.open({ persistence });
    for (let i = 0; i < 50; i++) await storage.put(`k${i}`, { i, pad: "x".repeat(i * 37) });
    // An awaited put() resolves before its commit is appended (the output gate waits for that):
    // sync() is what says the log was written, so its segment is open.
    await storage.sync();
    const flags = await segmentFdFlags(dir);
    expect(flags).toHaveLength(1);
    expect((flags[0] as number) & C.O_DSYNC).toBe(C.O_DSYNC);
    await storage.close();
    await persistence.close();
    expect(await segmentFdFlags(dir)).toEqual([]);

    persistence = await openFilePersistence(dir);
    storage = await ObjectStorage.open({ persistence });
    for (let i = 0; i < 50; i++) expect(await storage.get(`k${i}`)).toEqual({ i, pad: "x".repeat(i * 37) });
    await storage.put("after-reopen", 1);
    await storage.sync();
    const reopened = await segmentFdFlags(dir);
    expect(reopened).toHaveLength(1);
    for (const f of reopened) expect(f & C.O_DSYNC).toBe(C.O_DSYNC);
    await storage.close();
    await persistence.close();
  });

  it("opens the log without O_DSYNC under allowUnsyncedWrites", async () => {
    const dir = path.join(await newDir(), "obj");
    const persistence = await openFilePersistence(dir, { allowUnsyncedWrites: true });
    const storage = await ObjectStorage.open({ persistence });
    await storage.put("k", 1);
    await storage.sync();
    const flags = await segmentFdFlags(dir);
    expect(flags).toHaveLength(1);
    expect((flags[0] as number) & C.O_DSYNC).toBe(0);
    await storage.close();
    await persistence.close();
  });
});
