/**
 * Byte-array helpers shared by the durability layer and the S3 adapter.
 * @internal
 * @module
 */

/**
 * Concatenates byte arrays into one: a new array, or the one `allocate(length)` returns (exactly
 * `length` bytes, such as a pooled buffer's start).
 */
export function concat(
  parts: readonly Uint8Array[],
  allocate: (length: number) => Uint8Array = (length) => new Uint8Array(length),
): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = allocate(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
