/**
 * Log segments copied from another object's directory under a name that fits must never replay
 * another object's commits: every frame's CRC covers the directory's identity (log-binding.ts), so
 * such a segment fails its checksums like a damaged one (ERR_CORRUPT, nothing changed; `repair`
 * cuts it as damage). Directories an older version wrote (plain frames) keep opening: the first
 * append binds the log after its last commit, and frames up to there stay readable.
 */
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import type { CommitRecord } from "../../src/durability/commit-record";
import { type FilePersistence, openFilePersistence } from "../../src/durability/file-persistence";
import { kvRecord, range } from "./adapter-contract";
import { contents, unbindLog } from "./directory-files";

const root = await mkdtemp(join(tmpdir(), "actorstore-log-binding-"));
let counter = 0;
const freshDir = (): string => join(root, `object-${++counter}`);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A commit of object "b": same seq and time as object "a"'s, another value. */
const otherRecord = (seq: number): CommitRecord =>
  kvRecord(seq, { kv: [{ key: `key:${seq}`, value: new TextEncoder().encode(`OTHER ${seq}`) }] });
const named = async (dir: string, prefix: string): Promise<string[]> =>
  (await readdir(dir)).filter((n) => n.startsWith(prefix)).sort();
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string },
  );
const values = (records: readonly CommitRecord[]) =>
  records.map((r) => new TextDecoder().decode(r.kv[0]?.value ?? new Uint8Array()));

async function loaded(
  dir: string,
  options: { segmentBytes?: number; readOnly?: boolean } = {},
): Promise<FilePersistence> {
  const adapter = await openFilePersistence(dir, { segmentBytes: 100, ...options });
  await adapter.load();
  return adapter;
}

/** Objects "a" and "b" with the same seqs and times in the same segments, different values. */
async function twoObjects(commits: number): Promise<{ a: string; b: string }> {
  const a = freshDir();
  const b = freshDir();
  for (const [dir, record] of [
    [a, (s: number) => kvRecord(s)],
    [b, otherRecord],
  ] as const) {
    const adapter = await loaded(dir);
    for (const s of range(1, commits)) await adapter.append([record(s)]);
    await adapter.close();
  }
  expect(await named(a, "log-")).toEqual(await named(b, "log-"));
  return { a, b };
}

/** Rewrites `dir`'s log as an older version wrote it: plain frames, no marker, no identity unless kept. */
async function asOlderVersion(dir: string, keepIdentity = false): Promise<void> {
  await unbindLog(dir);
  if (!keepIdentity) for (const name of await named(dir, "ident-")) await rm(join(dir, name));
}

describe("log segments bound to the directory's identity", () => {
  it("a segment copied from another object's directory under its own name is ERR_CORRUPT, read-only too; nothing changes", async () => {
    const { a, b } = await twoObjects(12);
    const segments = await named(a, "log-");
    expect(segments.length).toBeGreaterThan(2);
    // The newest segment, then one in the middle (later segments follow it).
    for (const segment of [segments.at(-1), segments[1]] as string[]) {
      const own = await readFile(join(a, segment));
      await copyFile(join(b, segment), join(a, segment));
      const before = await contents(a);
      for (const readOnly of [false, true]) {
        const error = await failure(loaded(a, { readOnly }));
        expect(error, `${segment} readOnly=${readOnly}`).toMatchObject({ code: "ERR_CORRUPT" });
        expect(error?.message).toContain(`log segment ${segment}`);
        expect(error?.message).toContain("copied from another object's directory");
      }
      expect(await contents(a)).toEqual(before);
      await writeFile(join(a, segment), own);
    }
    // Its own segments back, it opens whole.
    const again = await loaded(a);
    expect(values(await again.readRecords(0, 12))).toEqual(range(1, 12).map((s) => `value ${s}`));
    await again.close();
  });

  it("repair cuts a copied segment as damage: none of the other object's commits is kept", async () => {
    const { a, b } = await twoObjects(12);
    const segments = await named(a, "log-");
    const middle = segments[1] as string;
    await copyFile(join(b, middle), join(a, middle));
    const out: string[] = [];
    expect(await runInspect([a, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(0);
    expect(out.join("\n")).toContain(`removed ${middle}`);
    const firstSeq = Number(middle.slice(4, 20));
    const again = await loaded(a);
    const records = await again.readRecords(0, firstSeq - 1);
    expect(values(records)).toEqual(range(1, firstSeq - 1).map((s) => `value ${s}`));
    expect((await again.load()).lastSeq).toBe(firstSeq - 1);
    await again.close();
  });

  it("an older version's directory (plain frames, with or without an identity) opens whole; its first append binds the log after its last commit", async () => {
    for (const keepIdentity of [false, true]) {
      const dir = freshDir();
      const first = await loaded(dir);
      for (const s of range(1, 6)) await first.append([kvRecord(s)]);
      await first.close();
      await asOlderVersion(dir, keepIdentity);
      // A load that appends nothing binds nothing: an older version may still write here.
      const reading = await loaded(dir);
      expect((await reading.load()).lastSeq).toBe(6);
      await reading.close();
      expect(await named(dir, "logbound-")).toEqual([]);
      const writing = await loaded(dir);
      for (const s of range(7, 12)) await writing.append([kvRecord(s)]);
      expect(await named(dir, "logbound-")).toEqual(["logbound-0000000000000006"]);
      // Streamed after the appends (read from disk and checked): both kinds of frame.
      expect(values(await writing.readRecords(0, 12))).toEqual(range(1, 12).map((s) => `value ${s}`));
      await writing.close();
      for (const readOnly of [false, true]) {
        const again = await loaded(dir, { readOnly });
        expect(values(await again.readRecords(0, 12))).toEqual(range(1, 12).map((s) => `value ${s}`));
        await again.close();
      }
    }
  });

  it("after the log is bound, an older version's segment copied in past the marker is ERR_CORRUPT saying so", async () => {
    const { a, b } = await twoObjects(12);
    await asOlderVersion(b);
    const segments = await named(a, "log-");
    const newest = segments.at(-1) as string;
    await copyFile(join(b, newest), join(a, newest));
    const error = await failure(loaded(a));
    expect(error).toMatchObject({ code: "ERR_CORRUPT" });
    expect(error?.message).toContain("a frame without this directory's identity in its checksum, after seq 0");
  });

  it("a deleted identity file with a bound log: ERR_CORRUPT saying to put it back, repair changes nothing; put back, it opens whole", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    for (const s of range(1, 8)) await adapter.append([kvRecord(s)]);
    await adapter.close();
    const [ident] = await named(dir, "ident-");
    await rm(join(dir, ident as string));
    const before = await contents(dir);
    const error = await failure(loaded(dir));
    expect(error).toMatchObject({ code: "ERR_CORRUPT" });
    expect(error?.message).toContain("Put the identity file back");
    const out: string[] = [];
    expect(await runInspect([dir, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) })).not.toBe(0);
    expect(out.join("\n")).toContain("cannot repair");
    expect(await contents(dir)).toEqual(before);
    await writeFile(join(dir, ident as string), new Uint8Array(0));
    const again = await loaded(dir);
    expect(values(await again.readRecords(0, 8))).toEqual(range(1, 8).map((s) => `value ${s}`));
    await again.close();
  });

  it("two identity files and no snapshot: repair keeps the one the log is bound to", async () => {
    const { a, b } = await twoObjects(6);
    const [own] = await named(a, "ident-");
    const [theirs] = await named(b, "ident-");
    await copyFile(join(b, theirs as string), join(a, theirs as string));
    const out: string[] = [];
    expect(await runInspect([a, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(0);
    expect(await named(a, "ident-")).toEqual([own]);
    const again = await loaded(a);
    expect(values(await again.readRecords(0, 6))).toEqual(range(1, 6).map((s) => `value ${s}`));
    await again.close();
  });
});
