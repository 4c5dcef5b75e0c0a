import { describe, expect, test } from "vitest";
import { type HeapProbe, unsupportedBuild, WasmHeap } from "../../src/engine/sqljs";

/** A fake module whose heap is a plain buffer and whose UTF8ToString decodes from it (as Emscripten's). */
function fakeModule(options: { decodes?: boolean; throws?: boolean } = {}): HeapProbe & { memory: Uint8Array } {
  const memory = new Uint8Array(4096);
  let next = 64;
  const decoder = new TextDecoder();
  return {
    memory,
    _malloc: (n) => {
      const at = next;
      next += (n + 7) & ~7;
      return at;
    },
    _free: () => {},
    writeArrayToMemory: (bytes, ptr) => memory.set(bytes, ptr),
    UTF8ToString: (ptr, max = 0) => {
      if (options.throws) throw new Error("boom");
      return options.decodes === false ? "" : decoder.decode(memory.subarray(ptr, ptr + max));
    },
  };
}

describe("WasmHeap", () => {
  test("finds the heap through one decode, reads words and copies bytes", () => {
    const module = fakeModule();
    const heap = new WasmHeap(module, unsupportedBuild);
    expect(heap.bytes.buffer).toBe(module.memory.buffer);
    new DataView(module.memory.buffer).setUint32(1024, 0xdeadbeef, true);
    expect(heap.u32(1024)).toBe(0xdeadbeef);
    module.memory.set([1, 2, 3], 2000);
    const copy = heap.copy(2000, 3);
    expect([...copy]).toEqual([1, 2, 3]);
    expect(copy.buffer).not.toBe(module.memory.buffer);
  });

  test("leaves TextDecoder.prototype.decode as it was, also when the module throws", () => {
    const before = Object.getOwnPropertyDescriptor(TextDecoder.prototype, "decode");
    new WasmHeap(fakeModule(), unsupportedBuild);
    expect(() => new WasmHeap(fakeModule({ throws: true }), unsupportedBuild)).toThrow("boom");
    expect(Object.getOwnPropertyDescriptor(TextDecoder.prototype, "decode")).toEqual(before);
  });

  test("a module that does not decode from its heap is refused with an actionable message", () => {
    expect(() => new WasmHeap(fakeModule({ decodes: false }), unsupportedBuild)).toThrow(
      /could not locate the WASM heap in sql\.js; this build of sql\.js is not supported\. Install sql\.js 1\.16\.0, the version actorstore pins\./,
    );
  });
});
