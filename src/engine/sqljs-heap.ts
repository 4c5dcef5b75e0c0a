/**
 * One of the sql.js adapter's workarounds (sqljs.ts lists them all and checks them at load): heap
 * capture. sql.js exports no view of its WASM heap; {@link WasmHeap} captures it through one
 * `TextDecoder.decode` call of the module's own `UTF8ToString`, reached through {@link HeapProbe}.
 */
import { copyPooled } from "../util/byte-pool";

/** The module functions the heap capture needs. */
export interface HeapProbe {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  writeArrayToMemory(bytes: Uint8Array, ptr: number): void;
  UTF8ToString(ptr: number, maxBytes?: number, ignoreNul?: boolean): string;
}

/** "actorstore" in ASCII: written into the heap, then looked for through the captured buffer. */
const PATTERN = new Uint8Array([0x61, 0x63, 0x74, 0x6f, 0x72, 0x73, 0x74, 0x6f, 0x72, 0x65]);

/**
 * A live view of the WASM memory of an Emscripten module that does not export its heap (sql.js).
 *
 * sql.js copies a blob out of its heap one byte at a time (`getBlob`), which dominated reading
 * rows of stored values. Its module exports no heap view, but its `UTF8ToString` decodes straight
 * from the heap with a `TextDecoder`; intercepting one such call (synchronously, for the length of
 * the call) hands us the heap's `ArrayBuffer`. A known pattern written with the module's own
 * `writeArrayToMemory` verifies it. When the memory grows, the old buffer is detached (length 0)
 * and the next access captures the new one.
 */
export class WasmHeap {
  readonly #probe: HeapProbe;
  /** The error for a module whose heap this capture does not find (sqljs.ts's `unsupportedBuild`). */
  readonly #unsupported: (what: string) => Error;
  /**
   * Detached (length 0) once the memory grew. Checked with `length`, never `byteLength`: V8 reads a
   * typed array's `length` inline, but calls out for the `byteLength` of one over WASM memory
   * (measured ~2 ns against ~18 ns, on every heap access of the hot paths).
   */
  #view: Uint8Array;
  #words: Uint32Array;

  /**
   * Captures the heap of the module behind `probe`; throws when that does not work, with
   * `unsupported("the WASM heap")` when the module does not decode from its heap.
   */
  constructor(probe: HeapProbe, unsupported: (what: string) => Error) {
    this.#probe = probe;
    this.#unsupported = unsupported;
    this.#view = capture(probe, unsupported);
    this.#words = new Uint32Array(this.#view.buffer);
  }

  /**
   * The whole heap. Fetch it again after any call into the module that may allocate: growing the
   * memory detaches the previous buffer.
   */
  get bytes(): Uint8Array {
    if (this.#view.length === 0) this.#recapture();
    return this.#view;
  }

  #recapture(): void {
    this.#view = capture(this.#probe, this.#unsupported);
    this.#words = new Uint32Array(this.#view.buffer);
  }

  /** The unsigned 32-bit integer at `address` (4-byte aligned), little-endian as WASM memory is. */
  u32(address: number): number {
    if (this.#view.length === 0) this.#recapture();
    return this.#words[address >>> 2] as number;
  }

  /** The signed 64-bit integer at `address` (8-byte aligned), little-endian. */
  i64(address: number): bigint {
    const lo = this.u32(address);
    const hi = this.u32(address + 4);
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
  }

  /**
   * The heap as 32-bit words (index = address / 4). Like {@link WasmHeap.bytes}, fetch it again
   * after any call into the module that may allocate.
   */
  get words(): Uint32Array {
    if (this.#view.length === 0) this.#recapture();
    return this.#words;
  }

  /** Writes the unsigned 32-bit integer `value` at `address` (4-byte aligned). */
  setU32(address: number, value: number): void {
    if (this.#view.length === 0) this.#recapture();
    this.#words[address >>> 2] = value;
  }

  /** Writes the 64-bit integer `value` at `address` (8-byte aligned), little-endian. */
  setI64(address: number, value: bigint): void {
    this.setU32(address, Number(BigInt.asUintN(32, value)));
    this.setU32(address + 4, Number(BigInt.asUintN(32, value >> 32n)));
  }

  /**
   * A copy of `length` bytes at `ptr`. Small copies are views into shared slabs (see
   * byte-pool.ts: a buffer of their own costs more than the copy); larger ones own their buffer.
   */
  copy(ptr: number, length: number): Uint8Array {
    return length === 0 ? new Uint8Array(0) : copyPooled(this.bytes.subarray(ptr, ptr + length), length);
  }
}

function capture(probe: HeapProbe, unsupported: (what: string) => Error): Uint8Array {
  const ptr = probe._malloc(PATTERN.length);
  if (ptr === 0) throw new Error("actorstore could not allocate in sql.js's heap.");
  try {
    probe.writeArrayToMemory(PATTERN, ptr);
    const seen = decodedBuffer(() => probe.UTF8ToString(ptr, PATTERN.length, true));
    const view = seen === undefined ? undefined : new Uint8Array(seen);
    if (view === undefined || !PATTERN.every((b, i) => view[ptr + i] === b)) throw unsupported("the WASM heap");
    return view;
  } finally {
    probe._free(ptr);
  }
}

/** The buffer the first `TextDecoder.decode` call made by `fn` decodes from (`fn` runs synchronously). */
function decodedBuffer(fn: () => void): ArrayBufferLike | undefined {
  const proto = TextDecoder.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(proto, "decode");
  const original = descriptor?.value as TextDecoder["decode"] | undefined;
  if (descriptor === undefined || original === undefined || descriptor.configurable !== true) {
    throw new Error(
      "actorstore could not read sql.js's heap: this runtime's TextDecoder.prototype.decode cannot be wrapped for the moment it takes.",
    );
  }
  let seen: ArrayBufferLike | undefined;
  Object.defineProperty(proto, "decode", {
    ...descriptor,
    value: function decode(this: TextDecoder, input?: AllowSharedBufferSource, options?: TextDecodeOptions) {
      if (seen === undefined && input !== undefined && ArrayBuffer.isView(input)) seen = input.buffer;
      return original.call(this, input, options);
    },
  });
  try {
    fn();
  } finally {
    Object.defineProperty(proto, "decode", descriptor);
  }
  return seen;
}
