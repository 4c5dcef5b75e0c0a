/**
 * Where a paged file's new chunks come from (sqljs-paged-file.ts, `newChunk`). By default each is
 * allocated where it is needed, on the thread that runs the engine. A supply made by the runtime
 * (the file adapter installs one that allocates on a worker thread: durability/chunk-worker.ts)
 * hands over chunks allocated elsewhere. Either way a chunk's pages are mapped by their first
 * write on the engine's thread (on a virtual machine each such fault costs microseconds: about
 * 1 ms for one 256 KiB chunk on the development VM), which the paged file does on a turn of its own
 * (`prepareAhead`).
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
