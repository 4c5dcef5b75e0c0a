/**
 * Row objects keyed by column name, as `exec`'s cursors hand them out.
 *
 * Building an object with computed keys (`row[name] = value` in a loop) is the single most
 * expensive step of reading rows: the keyed store site sees every statement's column names, so V8
 * takes its generic path for each property. A statement that has produced many rows gets a
 * function that builds its rows from an object literal instead (one shape, ~20× faster), where the
 * runtime allows generating code (`new Function`; Content-Security-Policy or Workers may forbid it,
 * and then the loop stays). Both produce the same object: properties in first-occurrence order,
 * the last of duplicate names winning.
 */
import type { SqlStorageRow, SqlStorageValue } from "./cursor";

/** Rows a statement produces before it gets a compiled builder. */
const COMPILE_AFTER_ROWS = 64;

/** Builds one row object from the row's values in column order. */
export type RowBuilder = (values: readonly SqlStorageValue[]) => SqlStorageRow;

let codegen: boolean | undefined;

function canGenerateCode(): boolean {
  if (codegen === undefined) {
    try {
      codegen = new Function("return 1")() === 1;
    } catch {
      codegen = false;
    }
  }
  return codegen;
}

/**
 * A row-object builder for one statement's column names; make one per compiled statement, so that
 * it learns how many rows that statement produces.
 */
export function rowBuilderFor(names: readonly string[]): RowBuilder {
  let rows = 0;
  let build: RowBuilder | undefined;
  return (values) => {
    if (build !== undefined) return build(values);
    if (++rows > COMPILE_AFTER_ROWS) build = compile(names);
    return buildByLoop(names, values);
  };
}

function buildByLoop(names: readonly string[], values: readonly SqlStorageValue[]): SqlStorageRow {
  const object: SqlStorageRow = {};
  // Plain assignment in column order: with duplicate names the last column wins.
  for (let i = 0; i < names.length; i++) object[names[i] as string] = values[i] as SqlStorageValue;
  return object;
}

function compile(names: readonly string[]): RowBuilder {
  // `__proto__` in a literal sets the prototype where assignment would not define a property the
  // same way: keep the loop for it.
  if (!canGenerateCode() || names.includes("__proto__")) return (values) => buildByLoop(names, values);
  // JSON string literals are valid JavaScript string literals: column names cannot inject code.
  const fields = names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(", ");
  return new Function("v", `return { ${fields} };`) as RowBuilder;
}
