/**
 * Object ids: 64 lowercase hex digits, like the platform's. A named id is derived from its name
 * (stable across runs); an unnamed one is random.
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
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new TypeError("Invalid Durable Object ID: must be 64 hex digits.");
    return new ObjectId(hex);
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
