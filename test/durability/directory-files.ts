/**
 * A directory's files as the bit-flip tests see them: every data file with its bytes, and one
 * flipped bit in one file.
 */
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { frameBinding, logBoundSeq } from "../../src/durability/log-binding";
import { parseIdentity } from "../../src/durability/object-identity";
import { decodeRecords, encodeRecords, type FrameBinding } from "../../src/durability/record-codec";

/**
 * Every data file of a directory with its bytes: segments, snapshots, meta, temp files. Lock
 * generations are left out: an open takes and releases the lock even when it then refuses.
 */
export async function contents(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort())
    if (!/^lock-\d{16}$/.test(name)) out[name] = (await readFile(join(dir, name))).toString("base64");
  return out;
}

/** Flips bit `bit` (0–7) of the byte at `at` modulo the file's length; returns that offset. */
export async function flipBit(dir: string, name: string, at: number, bit: number): Promise<number> {
  const bytes = await readFile(join(dir, name));
  const offset = at % bytes.length;
  bytes[offset] = (bytes[offset] as number) ^ (1 << bit);
  await writeFile(join(dir, name), bytes);
  return offset;
}

/** How `dir`'s log frames are checked (its identity and `logbound-…` markers, log-binding.ts): pass it to decodeRecords. */
export async function logBindingOf(dir: string): Promise<FrameBinding | undefined> {
  const names = await readdir(dir);
  const identity = names.map(parseIdentity).find((i) => i !== undefined);
  return frameBinding(
    identity?.id,
    names.map(logBoundSeq).filter((seq) => seq !== undefined),
  );
}

/**
 * Rewrites `dir`'s log as a version before log binding wrote it: every frame with the plain CRC, and
 * no `logbound-…` marker (log-binding.ts). The identity file is left for the caller.
 */
export async function unbindLog(dir: string): Promise<void> {
  const binding = await logBindingOf(dir);
  for (const name of (await readdir(dir)).filter((n) => /^log-\d{16}\.seg$/.test(n))) {
    const { records, tornTail } = decodeRecords(await readFile(join(dir, name)), 0, Infinity, false, binding);
    if (tornTail) throw new Error(`${name} does not decode whole`);
    await writeFile(join(dir, name), encodeRecords(records));
  }
  for (const name of await readdir(dir)) if (logBoundSeq(name) !== undefined) await rm(join(dir, name));
}

/** What the file adapter's `load()` of `dir` fails with (undefined when it opens), the adapter closed. */
export async function loadError(dir: string, readOnly: boolean): Promise<unknown> {
  const adapter = await openFilePersistence(dir, { readOnly });
  const error = await adapter.load().then(
    () => undefined,
    (e: unknown) => e,
  );
  await adapter.close();
  return error;
}
