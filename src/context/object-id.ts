/**
 * Object ids: 64 lowercase hex digits, like the platform's. A named id is derived from its name
 * (stable across runs); an unnamed one is random.
 *
 * An id made by a namespace (see the object host) is scoped to it, as on the platform: its first 32
 * hex digits come from the name (hashed together with the namespace's key) or from a random source,
 * its last 32 are a tag computed from the first half and the namespace's key. The same name in two
 * namespaces gives two ids, and a namespace recognises (and rejects) an id made by another.
 */

import { likePlatformPrototype } from "../util/platform-prototype";

/** Lets only this module construct ids (`new ObjectId()` elsewhere throws, as on the platform). */
const CONSTRUCT = Symbol("ObjectId.construct");

/**
 * The id of one stateful object, shaped like the platform's `DurableObjectId`: `name` and
 * `jurisdiction` are own, read-only, enumerable properties (`undefined` when unknown), `toString`
 * and `equals` are enumerable prototype methods, and `new` throws "Illegal constructor".
 */
export class ObjectId {
  readonly #hex: string;
  /** The name it was derived from, if any. */
  declare readonly name: string | undefined;
  /** The jurisdiction it was made for (`newUniqueId({ jurisdiction })`, `namespace.jurisdiction(…)`), if any. */
  declare readonly jurisdiction: string | undefined;

  /** @internal Ids are made by {@link ObjectId.fromName}, {@link ObjectId.unique}, {@link ObjectId.fromString} or a namespace. */
  constructor(token: typeof CONSTRUCT, hex: string, name?: string, jurisdiction?: string) {
    if (token !== CONSTRUCT) throw new TypeError("Illegal constructor");
    this.#hex = hex;
    const field = { writable: false, enumerable: true, configurable: true } as const;
    Object.defineProperties(this, {
      jurisdiction: { ...field, value: jurisdiction },
      name: { ...field, value: name },
    });
  }

  /** Derives the id of a named object (the same name always gives the same id). */
  static fromName(name: string): ObjectId {
    return new ObjectId(CONSTRUCT, hashToHex(name), name);
  }

  /** A new random id. */
  static unique(): ObjectId {
    const bytes = new Uint8Array(32);
    globalThis.crypto.getRandomValues(bytes);
    return new ObjectId(CONSTRUCT, Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""));
  }

  /** Parses a 64-hex-digit id string. */
  static fromString(hex: string): ObjectId {
    return new ObjectId(CONSTRUCT, parseHex(hex));
  }

  /** The 64 hex digits. */
  toString(): string {
    return this.#hex;
  }

  /** Whether two ids name the same object. Throws the platform's `TypeError` for anything but an id. */
  equals(other: ObjectId): boolean {
    if (!(other instanceof ObjectId)) throw new TypeError(NOT_AN_ID_MESSAGE);
    return this.#hex === other.#hex;
  }
}

// As on the platform: the methods are enumerable, and the class names itself.
likePlatformPrototype(ObjectId.prototype, "DurableObjectId");

/** The platform's message when `equals` is given something that is not an id. */
const NOT_AN_ID_MESSAGE =
  "Failed to execute 'equals' on 'DurableObjectId': parameter 1 is not of type 'DurableObjectId'.";

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
export function scopedIdFromName(key: string, name: string, jurisdiction?: string): ObjectId {
  const base = hashToHex(`name\u0000${key}\u0000${name}`).slice(0, 32);
  return new ObjectId(CONSTRUCT, base + namespaceTag(key, base), name, jurisdiction);
}

/** @internal A new random id in the namespace whose key is `key`. */
export function scopedUniqueId(key: string, jurisdiction?: string): ObjectId {
  const base = ObjectId.unique().toString().slice(0, 32);
  return new ObjectId(CONSTRUCT, base + namespaceTag(key, base), undefined, jurisdiction);
}

/** @internal Parses an id string for the namespace whose key is `key` (TypeError if it is another's). */
export function scopedIdFromString(key: string, hex: unknown): ObjectId {
  const normal = parseHex(hex);
  if (!belongsTo(key, normal)) throw new TypeError(FOREIGN_ID_MESSAGE);
  return new ObjectId(CONSTRUCT, normal);
}

/** @internal Whether the id string `hex` was made by the namespace whose key is `key`. */
export function belongsTo(key: string, hex: string): boolean {
  return hex.length === 64 && namespaceTag(key, hex.slice(0, 32)) === hex.slice(32);
}

/**
 * A name's bytes: UTF-8, with a lone surrogate encoded as its own three bytes (WTF-8) rather than
 * replaced by U+FFFD, so that two names that differ only there give two ids, as on the platform.
 * Well-formed names give their plain UTF-8 bytes.
 */
function nameBytes(name: string): Uint8Array {
  if (!/[\uD800-\uDFFF]/.test(name)) return new TextEncoder().encode(name);
  const out: number[] = [];
  for (let i = 0; i < name.length; i++) {
    const c = name.codePointAt(i) as number;
    if (c > 0xffff) i++;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Uint8Array.from(out);
}

/** A deterministic 256-bit hash of a name (FNV-1a lanes; ids need stability, not secrecy). */
function hashToHex(name: string): string {
  const bytes = nameBytes(name);
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
