/**
 * Errors as workerd stores them under its `enhanced_error_serialization` compatibility flag (on by
 * default for compatibility dates from 2026-04-21): not V8's own error record (`r`), but a host
 * object of workerd's serialization tag 10 (`nativeError`), written by `Serializer::WriteHostObject`
 * in `jsg/ser.c++` and read by `Deserializer::ReadHostObject`:
 *
 * - a varint error tag: 0 for a name it does not know (the name, any value, follows), 1 `Error`,
 *   2 `TypeError`, 3 `RangeError`, 4 `ReferenceError`, 5 `SyntaxError`, 6–9 the WebAssembly errors
 *   (`WasmCompileError`, `WasmLinkError`, `WasmRuntimeError`, `WasmSuspendError` by name: the
 *   WebAssembly classes name themselves `CompileError`…, so workerd writes those under tag 0),
 *   10 `EvalError`, 11 `URIError`, 12 `AggregateError`, 13 `SuppressedError`;
 * - the message (a value; workerd refuses to read one that is not a string);
 * - a plain object of the error's other own properties but its name and message, non-enumerable ones
 *   (`stack`, `cause`, an AggregateError's `errors`) included, array indices left out.
 *
 * Read back as workerd reads it: a new error of the tag's class with the message, the unknown name
 * defined on it, each stored property defined as an own data property (enumerable, as workerd's
 * `createDataProperty` makes it: `cause` and `errors` too), except `stack`, which stays
 * non-enumerable as on any error. An error whose properties refer back to the error itself cannot be
 * read, by workerd either (its id is registered only once it is read).
 *
 * The v8 codec writes errors in V8's own form, which every workerd reads whatever its flags.
 */
import type { HostReader } from "./v8-web-objects";

/** workerd's serialization tag of a native error (`nativeError` in worker-interface.capnp). */
export const NATIVE_ERROR_TAG = 10;

type ErrorMaker = (message: string) => Error;

/** A maker of the class `name` (a global, or one of WebAssembly's); an `Error` named so where missing. */
function maker(name: string, found: unknown): ErrorMaker {
  if (typeof found === "function") return (message) => new (found as new (message: string) => Error)(message);
  return (message) => {
    const error = new Error(message);
    Object.defineProperty(error, "name", { value: name, writable: true, enumerable: false, configurable: true });
    return error;
  };
}

const globals = globalThis as Record<string, unknown>;
const wasm = (globals.WebAssembly ?? {}) as Record<string, unknown>;

/** By workerd's error tag (`ErrorTag` in jsg/ser.c++); an AggregateError is made with no `errors`, as V8 makes it. */
const MAKERS: readonly ErrorMaker[] = [
  (message) => new Error(message), // 0: unknown name, set afterwards
  (message) => new Error(message),
  (message) => new TypeError(message),
  (message) => new RangeError(message),
  (message) => new ReferenceError(message),
  (message) => new SyntaxError(message),
  maker("CompileError", wasm.CompileError),
  maker("LinkError", wasm.LinkError),
  maker("RuntimeError", wasm.RuntimeError),
  maker("SuspendError", wasm.SuspendError),
  (message) => new EvalError(message),
  (message) => new URIError(message),
  (message) => {
    const error = new AggregateError([], message);
    delete (error as { errors?: unknown }).errors;
    return error;
  },
  maker("SuppressedError", globals.SuppressedError),
];

const INDEX = /^(?:0|[1-9]\d*)$/;

/** Reads a native error after its tag ({@link NATIVE_ERROR_TAG}), as workerd reads one. */
export function readNativeError(reader: HostReader): Error {
  const errorTag = reader.readUint32();
  const name = errorTag === 0 ? { value: reader.readValue() } : undefined;
  const message = reader.readValue();
  if (typeof message !== "string") throw new Error("a stored error's message is not a string");
  // A tag past the known ones is an Error, as workerd's toJsError makes it.
  const error = (MAKERS[errorTag] ?? MAKERS[1])?.(message) ?? new Error(message);
  if (name !== undefined) {
    Object.defineProperty(error, "name", { value: name.value, writable: true, enumerable: true, configurable: true });
  }
  const properties = reader.readValue();
  if (typeof properties === "object" && properties !== null) {
    for (const key of Object.keys(properties)) {
      if (INDEX.test(key) && Number(key) < 2 ** 32 - 1) continue;
      const value = (properties as Record<string, unknown>)[key];
      Object.defineProperty(error, key, { value, writable: true, enumerable: key !== "stack", configurable: true });
    }
  }
  return error;
}
