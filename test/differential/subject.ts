/**
 * The implementation under test: a fresh `ObjectStorage` per transcript.
 *
 * @example
 * ```ts
 * const results = await runOnSubject(ops); // fresh ObjectStorage.open({ backend: "sqlite" })
 * ```
 */
import type { DurableObjectStorage } from "@cloudflare/workers-types";
import { type Op, type OpResult, runOnStorage } from "./ops";

/** Options passed through to `ObjectStorage.open`. */
export type SubjectOptions = Readonly<Record<string, unknown>>;

interface ObjectStorageModule {
  ObjectStorage?: { open(options: SubjectOptions): Promise<unknown> };
}

// The specifier is a variable so that this file type-checks while src/index.ts is still being
// written by the storage engineers; switch to a static import once it exports ObjectStorage.
const ENTRY = "../../src/index";

/** Opens a fresh in-memory ObjectStorage (`backend: "sqlite"` unless overridden). */
export async function openObjectStorage(options: SubjectOptions = {}): Promise<DurableObjectStorage> {
  let entry: ObjectStorageModule;
  try {
    entry = (await import(/* @vite-ignore */ ENTRY)) as ObjectStorageModule;
  } catch (error) {
    throw new Error(`src/index.ts could not be loaded, so there is no ObjectStorage to compare: ${String(error)}`);
  }
  if (entry.ObjectStorage === undefined) throw new Error("src/index.ts does not export ObjectStorage yet.");
  const storage = await entry.ObjectStorage.open({ backend: "sqlite", ...options });
  return storage as DurableObjectStorage;
}

/** Runs a transcript on a fresh ObjectStorage and closes it afterwards (when it can be closed). */
export async function runOnSubject(ops: readonly Op[], options: SubjectOptions = {}): Promise<OpResult[]> {
  const storage = await openObjectStorage(options);
  try {
    return await runOnStorage(storage, ops);
  } finally {
    const closable = storage as unknown as { close?: () => unknown };
    if (typeof closable.close === "function") await closable.close();
  }
}

/**
 * Whether the subject offers the SQL API. Checked at runtime (not `.skip`) so that the SQL suite
 * starts comparing the moment `storage.sql.exec` exists.
 */
export async function sqlAvailable(): Promise<boolean> {
  try {
    const storage = await openObjectStorage();
    const sql = (storage as unknown as { sql?: { exec?: unknown } }).sql;
    return typeof sql?.exec === "function";
  } catch {
    return false;
  }
}
