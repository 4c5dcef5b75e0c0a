/**
 * The implementation under test: a fresh in-memory `ObjectStorage` per transcript.
 *
 * @example
 * ```ts
 * const results = await runOnSubject(ops); // fresh ObjectStorage.open({ backend: "sqlite" })
 * ```
 */
import type { DurableObjectStorage } from "@cloudflare/workers-types";
import { ObjectStorage, type ObjectStorageOptions } from "../../src/index";
import { type Op, type OpResult, runOnStorage } from "./ops";

/** Opens a fresh in-memory ObjectStorage (`backend: "sqlite"` unless overridden). */
export async function openObjectStorage(options: ObjectStorageOptions = {}): Promise<ObjectStorage> {
  return ObjectStorage.open({ backend: "sqlite", ...options });
}

/** Runs a transcript on a fresh ObjectStorage and closes it afterwards. */
export async function runOnSubject(ops: readonly Op[], options: ObjectStorageOptions = {}): Promise<OpResult[]> {
  const storage = await openObjectStorage(options);
  try {
    // The assignment doubles as a compile-time check that ObjectStorage is a DurableObjectStorage.
    const platformShaped: DurableObjectStorage = storage;
    return await runOnStorage(platformShaped, ops);
  } finally {
    await storage.close();
  }
}

/**
 * Whether the subject offers the SQL API (`typeof storage.sql?.exec === "function"`). The SQL
 * suite asserts it, so a storage without the API fails there instead of skipping the comparisons.
 */
export async function sqlAvailable(): Promise<boolean> {
  const storage = await openObjectStorage();
  try {
    const sql = (storage as unknown as { sql?: { exec?: unknown } }).sql;
    return typeof sql?.exec === "function";
  } catch {
    return false;
  } finally {
    await storage.close();
  }
}
