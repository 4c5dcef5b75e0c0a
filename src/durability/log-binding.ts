/**
 * Binding the file adapter's log frames to the directory's identity (object-identity.ts;
 * docs/durability.md, *Files from another object*): a frame's CRC-32 is taken over a tag and the
 * identity's 16 bytes before the frame's own bytes (the CRC starts from a seed instead of 0: no
 * byte more per commit, no more work). A segment copied from another object's directory under a
 * name that fits then fails its checksums like a damaged one, instead of replaying another
 * object's commits.
 *
 * Frames older versions wrote carry the plain CRC. The first append this version makes to a
 * directory whose log is not bound yet first creates, durably, the **marker** `logbound-<seq>`
 * (an empty file; the seq is the log's last commit then): frames of a seq up to it may be plain
 * (the older version's), every later one must be bound. A directory without a marker has a log no
 * version bound: any frame may be plain (and a bound one still passes).
 *
 * @packageDocumentation
 */
import { crc32 } from "./crc32";
import { isErrno, LOG_BOUND_RE, logBoundName } from "./file-layout";
import type { FrameBinding } from "./record-codec";

/** `ASLB`: the tag the starting CRC state covers before the identity. */
const TAG = [0x41, 0x53, 0x4c, 0x42];

/** The CRC-32 state a frame bound to identity `id` starts from. @internal */
export function logBindingSeed(id: Uint8Array): number {
  const bytes = new Uint8Array(TAG.length + id.length);
  bytes.set(TAG, 0);
  bytes.set(id, TAG.length);
  return crc32(bytes);
}

/** The seq a `logbound-…` marker names, or `undefined` for another name. @internal */
export function logBoundSeq(name: string): number | undefined {
  const m = LOG_BOUND_RE.exec(name);
  if (m === null) return undefined;
  const seq = Number(m[1]);
  return Number.isSafeInteger(seq) ? seq : undefined;
}

/**
 * How a directory of identity `id` reads its frames, given the seqs its `logbound-…` markers name:
 * none, a log no version bound (any frame may be plain); else the largest (one copied in from
 * elsewhere can only make it accept more, never refuse this directory's own frames). `undefined`
 * without identity: plain frames only. @internal
 */
export function frameBinding(id: Uint8Array | undefined, markers: readonly number[]): FrameBinding | undefined {
  if (id === undefined) return undefined;
  return {
    seed: logBindingSeed(id),
    unboundUpTo: markers.length === 0 ? Number.POSITIVE_INFINITY : Math.max(...markers),
  };
}

/**
 * Binds the log of the directory `io` is for after `seq` (its last commit): creates the marker
 * `logbound-<seq>` and makes it durable before resolving; only then may a bound frame be written
 * (a crash never leaves a bound frame the directory does not know to expect). An existing marker
 * of that name is fine. @internal
 */
export async function bindLog(
  io: {
    fs: typeof import("node:fs/promises");
    file(name: string): string;
    syncDir(directory: string): Promise<void>;
    directory: string;
  },
  seq: number,
): Promise<void> {
  try {
    await io.fs.writeFile(io.file(logBoundName(seq)), new Uint8Array(0), { flag: "wx" });
  } catch (error) {
    if (!isErrno(error, "EEXIST")) throw error;
  }
  await io.syncDir(io.directory);
}
