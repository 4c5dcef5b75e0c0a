/**
 * Storage limits. The defaults are the storage interface's (section 8) on both backends; each can be changed
 * through `ObjectStorage.open({ limits })`.
 */

/** The limits {@link ObjectStorage} enforces. */
export interface StorageLimits {
  /** Largest key, in UTF-8 bytes. */
  maxKeyBytes: number;
  /** Largest value, in bytes of its serialized form. */
  maxValueBytes: number;
  /** Most keys in one multi-key get, put or delete. */
  maxKeysPerCall: number;
}

/** The storage interface's limits: 2,048-byte keys, 131,072-byte values, 128 keys per call. */
export const DEFAULT_LIMITS: Readonly<StorageLimits> = Object.freeze({
  maxKeyBytes: 2048,
  maxValueBytes: 131_072,
  maxKeysPerCall: 128,
});

/**
 * Bytes a serialized value may exceed {@link StorageLimits.maxValueBytes} by. The platform checks
 * the V8-serialized size against 131072 + 34 (header and framing slack), so a value of exactly
 * 128 KiB of payload is accepted there; we keep the same slack for whichever codec wrote it.
 */
export const VALUE_SIZE_SLACK_BYTES = 34;

/** Resolves user-supplied limits over the defaults, rejecting nonsense early. */
export function resolveLimits(partial: Partial<StorageLimits> | undefined): StorageLimits {
  const limits = { ...DEFAULT_LIMITS, ...partial };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0) {
      throw new RangeError(`limits.${name} must be a positive integer (got ${String(value)}).`);
    }
  }
  return limits;
}
