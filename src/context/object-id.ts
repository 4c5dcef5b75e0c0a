/**
 * Object ids: 64 lowercase hex digits, like the platform's. A named id is derived from its name
 * (stable across runs); an unnamed one is random.
 *
 * An id made by a namespace (see the object host) is scoped to it, as on the platform: its first 32
 * hex digits come from the name (hashed together with the namespace's key) or from a random source,
 * its last 32 are a tag computed from the first half and the namespace's key. The same name in two
 * namespaces gives two ids, and a namespace recognises (and rejects) an id made by another.
 */

/** The id of one stateful object, shaped like the platform's `DurableObjectId`. */
export class ObjectId {
  readonly #hex: string;
  /** The name it was derived from, if any. */
  readonly name?: string;

  /** @internal */
  constructor(hex: string, name?: string) {
    this.#hex = hex;
    if (name !== undefined) this.name = name;
  }

  /** Derives the id of a named object (the same name always gives the same id). */
  static fromName(name: string): ObjectId {
    return new ObjectId(hashToHex(name), name);
  }

  /** A new random id. */
  static unique(): ObjectId {
    const bytes = new Uint8Array(32);
    globalThis.crypto.getRandomValues(bytes);
    return new ObjectId(Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""));
  }

  /** Parses a 64-hex-digit id string. */
  static fromString(hex: string): ObjectId {
    return new ObjectId(parseHex(hex));
  }

  /** The 64 hex digits. */
  toString(): string {
    return this.#hex;
  }

  /** Whether two ids name the same object. */
  equals(other: { toString(): string }): boolean {
    return this.#hex === other.toString();
  }
}

/** The platform's message for a string that is not 64 hex digits. */
export const INVALID_ID_MESSAGE = "Invalid Durable Object ID: must be 64 hex digits";
/** The platform's message for an id that another namespace made. */
export const FOREIGN_ID_MESSAGE = "Durable Object ID is not valid for this namespace.";

/** Checks and normalises 64 hex digits (either case, as the platform accepts). */
function parseHex(hex: unknown): string {
  if (typeof hex !== "string" || !/^[0-9a-fA-F]{64}$/.test(hex)) throw new TypeError(INVALID_ID_MESSAGE);
  return hex.toLowerCase();
}

/** The tag (32 hex digits) that binds the first half of an id to a namespace's key. */
function namespaceTag(key: string, base: string): string {
  return hashToHex(`tag\u0000${key}\u0000${base}`).slice(0, 32);
}

/** @internal The id of `name` in the namespace whose key is `key`. */
export function scopedIdFromName(key: string, name: string): ObjectId {
  const base = hashToHex(`name\u0000${key}\u0000${name}`).slice(0, 32);
  return new ObjectId(base + namespaceTag(key, base), name);
}

/** @internal A new random id in the namespace whose key is `key`. */
export function scopedUniqueId(key: string): ObjectId {
  const base = ObjectId.unique().toString().slice(0, 32);
  return new ObjectId(base + namespaceTag(key, base));
}

/** @internal Parses an id string for the namespace whose key is `key` (TypeError if it is another's). */
export function scopedIdFromString(key: string, hex: unknown): ObjectId {
  const normal = parseHex(hex);
  if (!belongsTo(key, normal)) throw new TypeError(FOREIGN_ID_MESSAGE);
  return new ObjectId(normal);
}

/** @internal Whether the id string `hex` was made by the namespace whose key is `key`. */
export function belongsTo(key: string, hex: string): boolean {
  return hex.length === 64 && namespaceTag(key, hex.slice(0, 32)) === hex.slice(32);
}

/** A deterministic 256-bit hash of a name (FNV-1a lanes; ids need stability, not secrecy). */
function hashToHex(name: string): string {
  const bytes = new TextEncoder().encode(name);
  let out = "";
  for (let lane = 0; lane < 8; lane++) {
    let h = (0x811c9dc5 ^ Math.imul(lane + 1, 0x9e3779b1)) >>> 0;
    for (const b of bytes) {
      h ^= b;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    // `^` yields a signed 32-bit integer: back to unsigned, or toString(16) prints a minus sign.
    out += (h >>> 0).toString(16).padStart(8, "0");
  }
  return out;
}
