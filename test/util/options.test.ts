import { describe, expect, it } from "vitest";
import { checkOptions, InvalidOptionError, is, nearest } from "../../src/util/options";

const SPEC = {
  directory: is.string({ nonEmpty: true }),
  codec: is.oneOf(["structured", "v8"]),
  retries: is.integer({ min: 0, max: 10 }),
  ratio: is.number({ min: 0 }),
  verbose: is.boolean(),
  onEvent: is.function(),
  limits: is.object({ maxKeyBytes: is.integer({ min: 1 }) }),
};

function errorOf(options: unknown): InvalidOptionError {
  try {
    checkOptions("f()", options, SPEC);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidOptionError);
    expect(e).toBeInstanceOf(TypeError);
    return e as InvalidOptionError;
  }
  throw new Error("expected checkOptions to throw");
}

describe("checkOptions", () => {
  it("accepts undefined, an empty object, and every valid value", () => {
    checkOptions("f()", undefined, SPEC);
    checkOptions("f()", {}, SPEC);
    checkOptions("f()", Object.create(null), SPEC);
    checkOptions(
      "f()",
      { directory: "d", codec: "v8", retries: 10, ratio: 0.5, verbose: false, onEvent: () => {}, limits: {} },
      SPEC,
    );
    // An option explicitly set to undefined counts as absent.
    checkOptions("f()", { directory: undefined, limits: { maxKeyBytes: undefined } }, SPEC);
  });

  it("unknown names: names the option, suggests a near miss, lists the valid ones", () => {
    const e = errorOf({ directoy: "./data" });
    expect(e.message).toBe(
      'f(): unknown option "directoy" (did you mean "directory"?). Valid options: directory, codec, retries, ratio, verbose, onEvent, limits.',
    );
    expect(e.code).toBe("ERR_INVALID_OPTION");
    expect(e.option).toBe("directoy");
    expect(errorOf({ dir: "./data" }).message).toBe(
      'f(): unknown option "dir". Valid options: directory, codec, retries, ratio, verbose, onEvent, limits.',
    );
    expect(errorOf({ Codec: "v8" }).message).toContain('(did you mean "codec"?)');
    expect(errorOf({ verbsoe: true }).message).toContain('(did you mean "verbose"?)');
  });

  it("nested objects: the path is dotted and the valid names are the nested ones", () => {
    const e = errorOf({ limits: { keySize: 1 } });
    expect(e.message).toBe('f(): unknown option "limits.keySize". Valid options of "limits": maxKeyBytes.');
    expect(errorOf({ limits: { maxKeyByte: 1 } }).message).toContain('(did you mean "limits.maxKeyBytes"?)');
    expect(errorOf({ limits: { maxKeyBytes: 0 } }).message).toBe(
      'f(): option "limits.maxKeyBytes" must be an integer ≥ 1; got 0.',
    );
    expect(errorOf({ limits: 5 }).message).toMatch(/^f\(\): option "limits" must be an object/);
  });

  it("wrong types and bad values name the option, the expectation and what was given", () => {
    expect(errorOf({ codec: "json" }).message).toBe('f(): option "codec" must be "structured" or "v8"; got "json".');
    expect(errorOf({ codec: "V8" }).message).toBe(
      'f(): option "codec" must be "structured" or "v8" (did you mean "v8"?); got "V8".',
    );
    expect(errorOf({ directory: "" }).message).toBe('f(): option "directory" must be a non-empty string; got "".');
    expect(errorOf({ directory: 42 }).message).toBe('f(): option "directory" must be a non-empty string; got 42.');
    expect(errorOf({ retries: 11 }).message).toBe('f(): option "retries" must be an integer from 0 to 10; got 11.');
    expect(errorOf({ retries: 1.5 }).message).toContain("must be an integer");
    expect(errorOf({ ratio: Number.NaN }).message).toBe('f(): option "ratio" must be a number ≥ 0; got NaN.');
    expect(errorOf({ ratio: "1" }).message).toBe('f(): option "ratio" must be a number ≥ 0; got "1".');
    expect(errorOf({ verbose: "yes" }).message).toBe('f(): option "verbose" must be true or false; got "yes".');
    expect(errorOf({ onEvent: {} }).message).toBe('f(): option "onEvent" must be a function; got an object.');
  });

  it("the options themselves must be a plain object", () => {
    for (const bad of ["./data/x", 1, null, [], new Map(), () => {}]) {
      expect(errorOf(bad).message).toMatch(/^f\(\): options must be an object/);
    }
  });

  it("never echoes a long string (it could be a secret)", () => {
    const secret = "s".repeat(100);
    expect(errorOf({ codec: secret }).message).not.toContain(secret);
  });
});

describe("nearest", () => {
  it("suggests typos, swaps and case slips; not unrelated names", () => {
    const names = ["directory", "persistence", "backend", "clock"];
    expect(nearest("directoy", names)).toBe("directory");
    expect(nearest("drectory", names)).toBe("directory");
    expect(nearest("persistance", names)).toBe("persistence");
    expect(nearest("BACKEND", names)).toBe("backend");
    expect(nearest("clokc", names)).toBe("clock");
    expect(nearest("dir", names)).toBeUndefined();
    expect(nearest("xyz", names)).toBeUndefined();
    expect(nearest("", names)).toBeUndefined();
  });
});
