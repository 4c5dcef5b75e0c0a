/**
 * Reading a request body within a size limit, for the HTTP endpoints (the API server, the cluster's
 * forwarding endpoint).
 */

/**
 * The chunks of `source`, or `undefined` as soon as they pass `limit` bytes: the rest is not read,
 * so a body larger than announced (or sent without a length) is never held whole.
 *
 * @example
 * ```ts
 * const chunks = await readAtMost(req, 1024);
 * if (chunks === undefined) return tooLarge();
 * ```
 */
export async function readAtMost(source: AsyncIterable<Uint8Array>, limit: number): Promise<Uint8Array[] | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return chunks;
}
