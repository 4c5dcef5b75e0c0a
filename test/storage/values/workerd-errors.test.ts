/**
 * Errors as workerd stores them from compatibility date 2026-04-21 on (its
 * `enhanced_error_serialization` flag): host objects of serialization tag 10, not V8's own error
 * record. The v8 codec failed on every such value ("corrupt: unknown host object tag 10"), so a
 * database a current worker wrote could not be read wherever it held an error.
 */
import { describe, expect, it } from "vitest";
import { ActorStoreError } from "../../../src/errors";
import { loadV8Codec } from "../../../src/storage/values/codec";

const v8Codec = await loadV8Codec();
if (v8Codec === undefined) throw new Error("node:v8 should load under Node.js");

const fromHex = (text: string) => Uint8Array.from(Buffer.from(text, "hex"));
const decode = (hex: string) => v8Codec.decode(fromHex(hex));

/** Own properties as `[name, "e"|"-" enumerable, value]`, to compare with what workerd reads back. */
function own(error: Error): [string, string, unknown][] {
  return Object.getOwnPropertyNames(error)
    .sort()
    .map((name) => {
      const descriptor = Object.getOwnPropertyDescriptor(error, name);
      return [name, descriptor?.enumerable === true ? "e" : "-", descriptor?.value];
    });
}

// Bytes Miniflare's workerd (4.20260426.0, compatibility date 2026-04-22) stored for these values,
// read from its SQLite file; what workerd itself read back is in each test.
const STACK = (head: string, at: string) => `${head}\n    at ${at}\n    at P.fetch (script-0:35:46)`;
const WORKERD = {
  // new Error("m")
  error:
    "FF0F5C0A0122016D6F2205737461636B22434572726F723A206D0A2020202061742065727220287363726970742D303A363A3134290A20202020617420502E666574636820287363726970742D303A33353A3436297B01",
  // new TypeError("t", { cause: { x: 1 } })
  typeError:
    "FF0F5C0A022201746F2205737461636B2249547970654572726F723A20740A20202020617420636175736520287363726970742D303A373A3136290A20202020617420502E666574636820287363726970742D303A33353A343629220563617573656F22017849027B017B02",
  // new AggregateError([1, new Error("in")], "a")
  aggregate:
    "FF0F5C0A0C2201616F2205737461636B224C4167677265676174654572726F723A20610A2020202061742061676720287363726970742D303A383A3134290A20202020617420502E666574636820287363726970742D303A33353A34362922066572726F7273410249025C0A012202696E6F2205737461636B22444572726F723A20696E0A2020202061742061676720287363726970742D303A383A3337290A20202020617420502E666574636820287363726970742D303A33353A3436297B012400027B02",
  // const e = new Error("c"); e.name = "MyErr"; e.code = 7
  named:
    "FF0F5C0A0022054D794572722201636F2205737461636B22464D794572723A20630A20202020617420637573746F6D20287363726970742D303A393A3239290A20202020617420502E666574636820287363726970742D303A33353A3436292204636F6465490E7B02",
  // new WebAssembly.CompileError("wc"): its name is not one workerd knows, so it is written
  compileError:
    "FF0F5C0A00220C436F6D70696C654572726F72220277636F2205737461636B224D436F6D70696C654572726F723A2077630A202020206174207761736D20287363726970742D303A31383A3135290A20202020617420502E666574636820287363726970742D303A33353A3436297B01",
  // const e = new Error("sh"); ({ a: e, b: e, c: { e } })
  shared:
    "FF0F6F2201615C0A01220273686F2205737461636B22484572726F723A2073680A2020202061742073686172656420287363726970742D303A32323A3239290A20202020617420502E666574636820287363726970742D303A33353A3436297B012201625E012201636F2201655E017B017B03",
  // const e = new Error("z"); e.message = 5: stored, and workerd then fails to read it
  numberMessage:
    "FF0F5C0A01490A6F2205737461636B22474572726F723A207A0A202020206174206E756D4D736720287363726970742D303A31313A3239290A20202020617420502E666574636820287363726970742D303A33353A3436297B01",
  // const e = new Error("sc"); e.cause = e: stored, and workerd then fails to read it
  selfCause:
    "FF0F5C0A01220273636F2205737461636B224B4572726F723A2073630A2020202061742073656C66436175736520287363726970742D303A32313A3332290A20202020617420502E666574636820287363726970742D303A33353A343629220563617573655E007B02",
};

describe("v8: errors workerd stores under enhanced_error_serialization (host object tag 10) read back as workerd reads them", () => {
  it("an Error and a TypeError keep their class, message and stack; a cause comes back enumerable, as workerd defines it", () => {
    const error = decode(WORKERD.error) as Error;
    expect(Object.getPrototypeOf(error)).toBe(Error.prototype);
    expect(own(error)).toEqual([
      ["message", "-", "m"],
      ["stack", "-", STACK("Error: m", "err (script-0:6:14)")],
    ]);
    const typeError = decode(WORKERD.typeError) as TypeError;
    expect(typeError).toBeInstanceOf(TypeError);
    expect(own(typeError)).toEqual([
      ["cause", "e", { x: 1 }],
      ["message", "-", "t"],
      ["stack", "-", STACK("TypeError: t", "cause (script-0:7:16)")],
    ]);
  });

  it("an AggregateError keeps its class and its errors (an error among them)", () => {
    const aggregate = decode(WORKERD.aggregate) as AggregateError;
    expect(aggregate).toBeInstanceOf(AggregateError);
    expect([aggregate.name, aggregate.message]).toEqual(["AggregateError", "a"]);
    expect(Object.getOwnPropertyDescriptor(aggregate, "errors")?.enumerable).toBe(true);
    const [one, inner] = aggregate.errors as [number, Error];
    expect(one).toBe(1);
    expect(Object.getPrototypeOf(inner)).toBe(Error.prototype);
    expect(inner.message).toBe("in");
  });

  it("a name workerd does not know is an Error with that name; other own properties are kept", () => {
    const named = decode(WORKERD.named) as Error & { code: unknown };
    expect(Object.getPrototypeOf(named)).toBe(Error.prototype);
    expect(own(named)).toEqual([
      ["code", "e", 7],
      ["message", "-", "c"],
      ["name", "e", "MyErr"],
      ["stack", "-", STACK("MyErr: c", "custom (script-0:9:29)")],
    ]);
    const compileError = decode(WORKERD.compileError) as Error;
    expect(Object.getPrototypeOf(compileError)).toBe(Error.prototype);
    expect([compileError.name, compileError.message]).toEqual(["CompileError", "wc"]);
  });

  it("an error met three times is one error", () => {
    const shared = decode(WORKERD.shared) as { a: Error; b: Error; c: { e: Error } };
    expect(shared.a).toBeInstanceOf(Error);
    expect(shared.a.message).toBe("sh");
    expect(shared.b).toBe(shared.a);
    expect(shared.c.e).toBe(shared.a);
  });

  it("what workerd stores but cannot read back (a message that is not a string, a cause that is the error) is ERR_DESERIALIZATION", () => {
    for (const hex of [WORKERD.numberMessage, WORKERD.selfCause]) {
      expect(() => decode(hex)).toThrow(ActorStoreError);
    }
  });
});

describe("v8: workerd's host objects that have no counterpart here", () => {
  it("are ERR_DESERIALIZATION saying what the value holds and that it is not damaged", () => {
    // A service binding (tag 11), an RPC stub (tag 1) inside an object.
    for (const [hex, kind] of [
      ["FF0F5C0B", "a service binding (Fetcher)"],
      ["FF0F6F22015C5C017B01", "an RPC stub"],
    ] as const) {
      let thrown: unknown;
      try {
        decode(hex);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ActorStoreError);
      expect((thrown as ActorStoreError).code).toBe("ERR_DESERIALIZATION");
      expect((thrown as Error).message).toContain(`holds ${kind} (workerd's serialization tag`);
      expect((thrown as Error).message).toContain("not damaged");
    }
  });
});
