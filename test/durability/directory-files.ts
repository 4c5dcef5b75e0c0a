/**
 * A directory's files as the bit-flip tests see them: every data file with its bytes, and one
 * flipped bit in one file.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

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
