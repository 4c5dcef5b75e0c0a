/**
 * Where a paged file's chunks come from and where they go (see sqljs-paged-file.ts): each chunk is
 * its own `SharedArrayBuffer` where that exists, and V8 is told about shared chunks that became
 * garbage, since it does not count them itself.
 *
 * @packageDocumentation
 */

/**
 * Shared chunks that became garbage, in bytes, and how many of them make V8 be told (see
 * {@link dropped}).
 */
let droppedUntold = 0;
let tells = 0;
const TELL_DROPPED_BYTES = 32 * 1024 * 1024;

/** Over V8's external-memory soft limit (64 MiB above the total at its last full GC). */
const TELL_ALLOCATION_BYTES = 80 * 1024 * 1024;

/** How many times V8 was told about dropped shared chunks in this process (tests). @internal */
export function droppedChunkTells(): number {
  return tells;
}

/**
 * A chunk's storage of `length` zero bytes. Where `SharedArrayBuffer` exists (Node; a browser
 * page only when cross-origin isolated) the chunk lives in one, for a reason of V8's: it counts
 * every new (unshared) `ArrayBuffer` as external memory allocated since its last full GC, and
 * with a small JavaScript heap a few MiB of that start one. A growing database allocates two
 * chunks per 450 KB batch of the growth benchmark, which set off a full GC every ~13 batches
 * (20 in its quick run, 3–30 ms each, most of its p99); a shared buffer is not counted
 * (`BackingStore::PerIsolateAccountingLength`). The chunk is used by this thread only, exactly as
 * an unshared one; copies into and out of shared memory run somewhat slower (V8 copies it with
 * relaxed atomic word moves: ~250 against ~170 ns per 4 KiB page here). What V8 no longer sees is
 * a chunk that becomes garbage, which {@link dropped} reports instead.
 */
export function newChunk(length: number): Uint8Array {
  return typeof SharedArrayBuffer === "function"
    ? new Uint8Array(new SharedArrayBuffer(length))
    : new Uint8Array(length);
}

/**
 * Notes that `chunk` is no longer part of any file (copied on write, or its file closed). V8 does
 * not count shared memory, so garbage shared chunks alone would never start a full GC: a closed
 * 100 MB database's chunks stayed resident indefinitely in a test with a young-only workload.
 * Every {@link TELL_DROPPED_BYTES} of them, an `ArrayBuffer` just over V8's external-memory soft
 * limit is allocated and dropped (never touched: it costs address space, not resident memory),
 * which makes V8 start the full GC that frees them, as their own allocation would have.
 */
export function dropped(chunk: Uint8Array | undefined): void {
  if (chunk === undefined || !isShared(chunk)) return;
  droppedUntold += chunk.byteLength;
  if (droppedUntold < TELL_DROPPED_BYTES) return;
  droppedUntold = 0;
  tells++;
  try {
    void new ArrayBuffer(TELL_ALLOCATION_BYTES);
  } catch {
    // No address space for it (a strict overcommit policy): the garbage waits for the next full GC.
  }
}

function isShared(chunk: Uint8Array): boolean {
  return typeof SharedArrayBuffer === "function" && chunk.buffer instanceof SharedArrayBuffer;
}
