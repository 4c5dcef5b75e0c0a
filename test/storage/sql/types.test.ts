/** SqlStorage is type-compatible with the platform's `SqlStorage` (@cloudflare/workers-types). */
import type {
  SqlStorage as CfSqlStorage,
  SqlStorageCursor as CfSqlStorageCursor,
  SqlStorageValue as CfSqlStorageValue,
} from "@cloudflare/workers-types";
import { describe, expectTypeOf, test } from "vitest";
import type { SqlStorageCursor, SqlStorageValue } from "../../../src/storage/sql/cursor";
import type { SqlStorage } from "../../../src/storage/sql/sql-storage";

describe("types", () => {
  test("SqlStorage is assignable to the platform's SqlStorage", () => {
    expectTypeOf<SqlStorage>().toMatchTypeOf<CfSqlStorage>();
    expectTypeOf<SqlStorageCursor<{ a: number }>>().toMatchTypeOf<CfSqlStorageCursor<{ a: number }>>();
    expectTypeOf<SqlStorageValue>().toEqualTypeOf<CfSqlStorageValue>();
    const use = (sql: SqlStorage): CfSqlStorage => sql;
    expectTypeOf(use).returns.toEqualTypeOf<CfSqlStorage>();
  });

  test("exec's row type flows into the cursor", () => {
    expectTypeOf<ReturnType<SqlStorageCursor<{ n: number }>["one"]>>().toEqualTypeOf<{ n: number }>();
  });
});
