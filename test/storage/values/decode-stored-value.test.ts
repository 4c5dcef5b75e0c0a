import { describe, expect, it } from "vitest";
import { ActorStoreError } from "../../../src/errors";
import { decodeStoredValue, defaultCodec, loadV8Codec, structuredCodec } from "../../../src/storage/values/codec";
import { expectSameValue } from "./deep-equal";

const v8Codec = await loadV8Codec();
if (v8Codec === undefined) throw new Error("node:v8 should load under Node.js");

function sample(): unknown {
  const self: Record<string, unknown> = { when: new Date(1), bytes: new Uint16Array([1, 2]), n: -0 };
  self.self = self;
  // biome-ignore lint/suspicious/noSparseArray: holes are the point
  return [self, new Map([[1n, new Set(["a"])]]), [1, , 3], new TypeError("t")];
}

describe("decodeStoredValue", () => {
  it("decodeStoredValue: reads a value written by the structured codec", () => {
    expectSameValue(decodeStoredValue(structuredCodec.encode(sample()), {}), sample());
  });

  it("decodeStoredValue: reads a value written by the v8 codec", () => {
    expectSameValue(decodeStoredValue(v8Codec.encode(sample()), { v8: v8Codec }), sample());
  });

  it("decodeStoredValue: both codecs read back the same value for the same input", () => {
    const viaStructured = decodeStoredValue(structuredCodec.encode(sample()), { v8: v8Codec });
    const viaV8 = decodeStoredValue(v8Codec.encode(sample()), { v8: v8Codec });
    expectSameValue(viaStructured, viaV8);
  });

  it("decodeStoredValue: rejects a V8 value when node:v8 is unavailable, saying what to do", () => {
    const bytes = v8Codec.encode({ a: 1 });
    expect(() => decodeStoredValue(bytes, {})).toThrow(ActorStoreError);
    expect(() => decodeStoredValue(bytes, {})).toThrow(/node:v8 is not available.*read it under Node\.js/);
    // It reaches users through storage.get() in a browser: it names nothing they cannot call
    // (loadV8Codec and the codecs argument are internal, not exported).
    expect(() => decodeStoredValue(bytes, {})).not.toThrow(/loadV8Codec|pass \{/);
    try {
      decodeStoredValue(bytes, {});
    } catch (error) {
      expect((error as ActorStoreError).code).toBe("ERR_DESERIALIZATION");
    }
  });

  it("decodeStoredValue: rejects an unknown first byte and an empty value", () => {
    expect(() => decodeStoredValue(new Uint8Array([0x42, 1]), { v8: v8Codec })).toThrow(/unknown byte 0x42/);
    expect(() => decodeStoredValue(new Uint8Array(0), { v8: v8Codec })).toThrow(/empty/);
  });

  it("decodeStoredValue: wraps corrupt data in ERR_DESERIALIZATION for both codecs", () => {
    for (const bytes of [Uint8Array.of(0x01, 0xee), Uint8Array.of(0xff, 0x0f, 0xee)]) {
      expect(() => decodeStoredValue(bytes, { v8: v8Codec })).toThrow(
        expect.objectContaining({ code: "ERR_DESERIALIZATION" }),
      );
    }
  });
});

describe("defaultCodec", () => {
  it("defaultCodec: resolves to the same codec every time", async () => {
    const codec = await defaultCodec();
    expect(await defaultCodec()).toBe(codec);
    expect(["structured", "v8"]).toContain(codec.name);
  });
});

describe("decodeStoredValue out of stack", () => {
  /** Calls `fn` under `depth` extra stack frames. */
  const atDepth = <T>(depth: number, fn: () => T): T => (depth === 0 ? fn() : atDepth(depth - 1, fn));

  it.each([
    ["structured", structuredCodec],
    ["v8", v8Codec],
  ])(
    "%s: a nested value read with too little stack left fails with the engine's RangeError, not as a corrupt value",
    (_, codec) => {
      let value: unknown = [];
      for (let i = 0; i < 1_500; i++) value = [value];
      const bytes = codec.encode(value);
      expect(Array.isArray(decodeStoredValue(bytes, { v8: v8Codec }))).toBe(true);
      // Descend until reading runs out of stack (the descent itself may run out first: try deeper).
      let failure: unknown;
      for (let depth = 0; depth <= 50_000 && failure === undefined; depth += 100) {
        try {
          atDepth(depth, () => {
            try {
              decodeStoredValue(bytes, { v8: v8Codec });
            } catch (error) {
              failure = error;
            }
          });
        } catch {
          break;
        }
      }
      expect(failure).toBeInstanceOf(RangeError);
      expect(failure).not.toBeInstanceOf(ActorStoreError);
      expect((failure as Error).message).toMatch(/call stack/);
    },
  );
});
