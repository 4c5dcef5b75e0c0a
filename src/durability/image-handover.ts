/**
 * Whose a snapshot image is once an adapter has read it, so that opening an object does not copy
 * the image on its way into the engine (docs/durability.md, "Opening from a snapshot").
 *
 * An adapter that returns a fresh buffer from `readSnapshot` and never touches it again marks it
 * with {@link handOverImage}: the engine then takes it as its database file (`"take"`). An adapter
 * that keeps its images (the in-memory one: point-in-time recovery reopens them) lends the stored
 * image through {@link LEND_SNAPSHOT}: the engine reads it in place and copies a part before its
 * first write to it (`"share"`), so the stored image never changes. An image with neither signal
 * (any other adapter, or one wrapped by another) is copied, as before.
 *
 * @packageDocumentation
 */
import type { ImageUse } from "../engine/engine";
import type { PersistenceAdapter } from "./persistence";

/** Images handed over, not yet taken, with the adapter that handed each over. */
const handedOver = new WeakMap<Uint8Array, object>();

/**
 * Marks `image`, which `adapter`'s `readSnapshot` is about to return, as handed over: the adapter
 * keeps no reference and never reads or writes it again. Only a caller of that adapter itself may
 * take it: a wrapper around the adapter might keep the array (a cache), so through one the image is
 * copied. Returns `image`. @internal
 */
export function handOverImage(adapter: object, image: Uint8Array): Uint8Array {
  handedOver.set(image, adapter);
  return image;
}

/** Images the storage core handed over to an adapter's `writeSnapshot`, with that adapter. */
const givenToWrite = new WeakMap<Uint8Array, object>();

/**
 * Marks `image`, which the caller is about to pass to `adapter.writeSnapshot`, as handed over: the
 * caller keeps no reference to its bytes and never changes them (nor does anything else: a fresh
 * export or a finished copy). An adapter that stores images in memory may then keep `image` itself
 * instead of a copy ({@link takeWrittenImage}). Only `adapter` may: through a wrapper the mark names
 * the wrapper, and the adapter behind it copies, as before. Returns `image`. @internal
 */
export function handOverWrittenImage(adapter: object, image: Uint8Array): Uint8Array {
  givenToWrite.set(image, adapter);
  return image;
}

/**
 * Whether `adapter` may keep `image`, given to its `writeSnapshot`, without a copy: its caller
 * handed it over to `adapter` itself ({@link handOverWrittenImage}). The mark is used up. @internal
 */
export function takeWrittenImage(adapter: object, image: Uint8Array): boolean {
  const taken = givenToWrite.get(image) === adapter;
  givenToWrite.delete(image);
  return taken;
}

/**
 * The method under which an adapter lends its stored image of a snapshot: the same bytes it keeps
 * (no copy), which the borrower must never change, and which the adapter never changes either.
 * @internal
 */
export const LEND_SNAPSHOT: unique symbol = Symbol("lendSnapshot");

/** An adapter that lends its stored images (see {@link LEND_SNAPSHOT}). @internal */
export interface LendsSnapshots {
  [LEND_SNAPSHOT](seq: number): Promise<Uint8Array>;
}

/**
 * Reads snapshot `seq` of `adapter` to open an engine from it, with how the engine may use the
 * bytes: `"share"` when the adapter lends its stored image, `"take"` when it handed the bytes over
 * (`adapter` itself marked them; the mark is used up: only the first reader takes them), `"copy"`
 * otherwise. @internal
 */
export async function readSnapshotToOpen(
  adapter: Pick<PersistenceAdapter, "readSnapshot">,
  seq: number,
): Promise<{ image: Uint8Array; use: ImageUse }> {
  const lend = (adapter as Partial<LendsSnapshots>)[LEND_SNAPSHOT];
  if (typeof lend === "function") return { image: await lend.call(adapter, seq), use: "share" };
  const image = await adapter.readSnapshot(seq);
  const taken = handedOver.get(image) === adapter;
  handedOver.delete(image);
  return { image, use: taken ? "take" : "copy" };
}
