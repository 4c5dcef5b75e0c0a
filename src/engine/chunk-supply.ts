/**
 * Where a paged file's new chunks come from (sqljs-paged-file.ts, `newChunk`). By default each is
 * allocated where it is needed, on the thread that runs the engine. A chunk's allocation is mostly
 * its first touches: the zero-filling maps each 4 KiB page, and on a virtual machine each of those
 * faults costs microseconds (about 0.7 ms for one 256 KiB chunk on the development VM, some 20% of
 * the engine thread's time while a database grows). A supply made by the runtime (the file adapter
 * installs one that allocates on a worker thread: durability/chunk-worker.ts) hands over chunks
 * that are already mapped, so those faults happen on another thread.
 *
 * @packageDocumentation
 */

/**
 * Chunks allocated ahead, possibly on another thread.
 *
 * Contract: {@link ChunkSupply.take} returns a `SharedArrayBuffer` of exactly `bytes` bytes, every
 * byte zero, never handed out before and not used by anyone else afterwards; or `undefined` when
 * none is ready (the caller then allocates its own). It must not block.
 */
export interface ChunkSupply {
  take(bytes: number): SharedArrayBuffer | undefined;
}

let supply: ChunkSupply | undefined;
let supplied = 0;

/**
 * Installs the process's chunk supply (`undefined` removes it); returns the previous one. Paged
 * files of every engine in the process take their new chunks from it when it has one ready.
 * @internal
 */
export function useChunkSupply(next: ChunkSupply | undefined): ChunkSupply | undefined {
  const previous = supply;
  supply = next;
  return previous;
}

/** How many chunks the supply has handed out in this process (tests). @internal */
export function suppliedChunks(): number {
  return supplied;
}

/**
 * A zeroed chunk of `bytes` from the supply, or `undefined` (no supply, none ready, or one of
 * another size, which is never used). @internal
 */
export function takeSuppliedChunk(bytes: number): Uint8Array | undefined {
  const buffer = supply?.take(bytes);
  if (buffer === undefined || buffer.byteLength !== bytes) return undefined;
  supplied++;
  return new Uint8Array(buffer);
}
