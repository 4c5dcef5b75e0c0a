/**
 * The options arguments of the storage API, converted as the platform's bindings convert its
 * dictionaries, before the method looks at them: each member is read once, in the platform's order
 * (its declaration order, not the alphabet), with a plain property read (so an inherited member
 * counts, and a getter runs once), and converted at once to its type. A getter that throws, or a
 * member that does not convert, fails the call there, before anything takes effect: the members
 * after it are not read. What the method then works with is a snapshot of plain values, so a
 * getter or a Proxy cannot answer differently to a later read.
 */
import { convertPlatformDate } from "./alarm-time";
import { type ApiInterface, checkOptions } from "./argument-types";
import { toKey, toLong } from "./keys";
import type {
  GetAlarmOptions,
  GetOptions,
  ListOptions,
  PutOptions,
  SetAlarmOptions,
  SyncKvListOptions,
} from "./options";

/**
 * A member's type, as the platform declares it: `boolean` (any value, by truthiness), `string` (as
 * a template literal converts: a Symbol fails), `long` (a 32-bit integer, {@link toLong}), `date`
 * (a number or a Date of the platform's date range).
 */
type MemberType = "boolean" | "string" | "long" | "date";

/** One options dictionary: the platform's name for it, and its members in the platform's order. */
interface Dictionary<T> {
  readonly name: string;
  readonly members: ReadonlyArray<readonly [name: keyof T & string, type: MemberType]>;
}

/** Options of `transaction()` (none of them has an effect here, as none has one locally on the platform). */
export interface TransactionOptions {
  /** A time to read as of (converted and checked as the platform does, then ignored). */
  asOfTime?: number;
  /** A hint for the platform's scheduler (ignored). */
  lowPriority?: boolean;
}

/** `get()`'s options. */
export const GET_OPTIONS: Dictionary<GetOptions> = {
  name: "GetOptions",
  members: [
    ["allowConcurrency", "boolean"],
    ["noCache", "boolean"],
  ],
};

/** `put()`'s, `delete()`'s and `deleteAll()`'s options. */
export const PUT_OPTIONS: Dictionary<PutOptions> = {
  name: "PutOptions",
  members: [
    ["allowConcurrency", "boolean"],
    ["allowUnconfirmed", "boolean"],
    ["noCache", "boolean"],
  ],
};

/** The range members of a listing, in the platform's order (the synchronous `kv.list()` has only these). */
const LIST_RANGE_MEMBERS: Dictionary<SyncKvListOptions>["members"] = [
  ["start", "string"],
  ["startAfter", "string"],
  ["end", "string"],
  ["prefix", "string"],
  ["reverse", "boolean"],
  ["limit", "long"],
];

/** `list()`'s options. */
export const LIST_OPTIONS: Dictionary<ListOptions> = {
  name: "ListOptions",
  members: [...LIST_RANGE_MEMBERS, ["allowConcurrency", "boolean"], ["noCache", "boolean"]],
};

/** The synchronous `kv.list()`'s options: the range members of {@link LIST_OPTIONS}, in its order. */
export const SYNC_KV_LIST_OPTIONS: Dictionary<SyncKvListOptions> = { name: "ListOptions", members: LIST_RANGE_MEMBERS };

/** `getAlarm()`'s options. */
export const GET_ALARM_OPTIONS: Dictionary<GetAlarmOptions> = {
  name: "GetAlarmOptions",
  members: [["allowConcurrency", "boolean"]],
};

/** `setAlarm()`'s and `deleteAlarm()`'s options. */
export const SET_ALARM_OPTIONS: Dictionary<SetAlarmOptions> = {
  name: "SetAlarmOptions",
  members: [
    ["allowConcurrency", "boolean"],
    ["allowUnconfirmed", "boolean"],
  ],
};

/** `transaction()`'s options. */
export const TRANSACTION_OPTIONS: Dictionary<TransactionOptions> = {
  name: "TransactionOptions",
  members: [
    ["asOfTime", "date"],
    ["lowPriority", "boolean"],
  ],
};

function convertMember(value: unknown, type: MemberType, member: string, dictionary: string): unknown {
  switch (type) {
    case "boolean":
      return Boolean(value);
    case "string":
      return toKey(value);
    case "long":
      return toLong(value);
    case "date":
      return convertPlatformDate(
        value,
        () =>
          new TypeError(
            `Incorrect type for the '${member}' field on '${dictionary}': the provided value is not of type 'date'.`,
          ),
      );
  }
}

/**
 * Converts parameter `position` of `method` on `on` as the platform converts an options
 * dictionary: `undefined` or `null` is no options; anything else but an object or a function is the
 * platform's TypeError (`parameter 2 is not of type 'GetOptions'`); an object's members are read in
 * the dictionary's order, each once, and converted. A member whose value is `undefined` is absent.
 * Returns a fresh plain object of the members present (or `undefined` for no options).
 *
 * @example
 * ```ts
 * readOptions({ noCache: 1 }, GET_OPTIONS, "get", "DurableObjectStorage", 2); // { noCache: true }
 * ```
 */
export function readOptions<T>(
  options: unknown,
  dictionary: Dictionary<T>,
  method: string,
  on: ApiInterface,
  position: number,
): T | undefined {
  if (options === undefined || options === null) return undefined;
  checkOptions(options, method, on, position, dictionary.name);
  const source = options as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [member, type] of dictionary.members) {
    const value = source[member];
    if (value !== undefined) out[member] = convertMember(value, type, member, dictionary.name);
  }
  return out as T;
}
