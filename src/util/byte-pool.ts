/**
 * Small byte arrays carved out of shared slabs, as Node's `Buffer.allocUnsafe` does with its pool:
 * a typed array over 64 bytes gets its own off-heap backing store, and allocating one costs about
 * as much as encoding a short value (measured ~400 ns against ~75 ns for a view into a slab).
 *
 * The trade-off is the pool's usual one: a slab stays alive while any array carved from it does,
 * so a long-lived small array can keep up to {@link SLAB_BYTES} alive. Only arrays up to
 * {@link MAX_POOLED_BYTES} are pooled.
 */

/** Size of one slab. */
export const SLAB_BYTES = 8192;
/** Larger arrays get their own buffer (their allocation is small next to filling them). */
export const MAX_POOLED_BYTES = 1024;

let slab = new ArrayBuffer(SLAB_BYTES);
let offset = 0;

/**
 * A new array holding a copy of `source[0, length)`; small copies share a slab.
 *
 * @example
 * ```ts
 * const scratch = new Uint8Array(4096);
 * const bytes = copyPooled(scratch, 10); // a 10-byte array of its own (a view into a slab)
 * ```
 */
export function copyPooled(source: Uint8Array, length: number): Uint8Array {
  if (length > MAX_POOLED_BYTES) return source.slice(0, length);
  if (offset + length > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    offset = 0;
  }
  const out = new Uint8Array(slab, offset, length);
  out.set(length === source.length ? source : source.subarray(0, length));
  // Keep every array 8-byte aligned, so readers may put any view over it.
  offset += (length + 7) & ~7;
  return out;
}
