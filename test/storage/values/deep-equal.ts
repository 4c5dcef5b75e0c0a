/**
 * A deep equality for structured-clone results that is stricter than `expect().toEqual()` where the
 * codecs can go wrong: it tells `-0` from `0`, a hole from `undefined`, a `Uint8Array` from an
 * `Int8Array` with the same bytes, a `RangeError` from an `Error`, and two references to one object
 * from two equal objects (it checks that the graphs are isomorphic, so cycles must be kept as cycles).
 *
 * Plain objects compare equal whatever their prototype is among `Object.prototype` and `null`, because
 * the platform returns every plain object (and class instance) with `Object.prototype`. `stack` is
 * not compared: it is optional.
 */

const plainProtos = new Set<unknown>([Object.prototype, null]);
const objectToString = Object.prototype.toString;

/** Returns where `actual` and `expected` first differ (a path and a reason), or `undefined` if equal. */
export function findDifference(actual: unknown, expected: unknown): string | undefined {
  // Bijection between the two graphs: an object must always meet the same counterpart.
  const forward = new Map<object, object>();
  const backward = new Map<object, object>();

  function same(a: unknown, e: unknown, path: string): string | undefined {
    if (typeof a !== typeof e) return `${path}: ${typeof a} vs ${typeof e}`;
    if (typeof a !== "object" || a === null || e === null) {
      return Object.is(a, e) ? undefined : `${path}: ${String(a)} vs ${String(e)}`;
    }
    const ao = a;
    const eo = e as object;
    const seenA = forward.get(ao);
    const seenE = backward.get(eo);
    if (seenA !== undefined || seenE !== undefined) {
      return seenA === eo && seenE === ao ? undefined : `${path}: reference structure differs (sharing or cycle lost)`;
    }
    forward.set(ao, eo);
    backward.set(eo, ao);

    const protoA: unknown = Object.getPrototypeOf(ao);
    const protoE: unknown = Object.getPrototypeOf(eo);
    if (protoA !== protoE && !(plainProtos.has(protoA) && plainProtos.has(protoE))) {
      return `${path}: prototype ${describe(ao)} vs ${describe(eo)}`;
    }
    const brand = objectToString.call(eo);
    if (objectToString.call(ao) !== brand) return `${path}: ${objectToString.call(ao)} vs ${brand}`;

    if (ao instanceof Date && eo instanceof Date) {
      return Object.is(ao.getTime(), eo.getTime()) ? undefined : `${path}: date ${ao.getTime()} vs ${eo.getTime()}`;
    }
    if (ao instanceof RegExp && eo instanceof RegExp) {
      return ao.source === eo.source && ao.flags === eo.flags ? undefined : `${path}: ${ao} vs ${eo}`;
    }
    if (ao instanceof ArrayBuffer && eo instanceof ArrayBuffer)
      return sameBytes(new Uint8Array(ao), new Uint8Array(eo), path);
    if (ArrayBuffer.isView(ao) && ArrayBuffer.isView(eo)) {
      if (ao.byteOffset !== eo.byteOffset || ao.byteLength !== eo.byteLength) {
        return `${path}: view window ${ao.byteOffset}+${ao.byteLength} vs ${eo.byteOffset}+${eo.byteLength}`;
      }
      return same(ao.buffer, eo.buffer, `${path}.buffer`);
    }
    if (ao instanceof Error && eo instanceof Error) {
      if (ao.name !== eo.name) return `${path}: error name ${ao.name} vs ${eo.name}`;
      for (const key of ["message", "cause"] as const) {
        const inA = Object.hasOwn(ao, key);
        if (inA !== Object.hasOwn(eo, key)) return `${path}.${key}: present in only one`;
        const d = inA ? same(ao[key], eo[key], `${path}.${key}`) : undefined;
        if (d !== undefined) return d;
      }
      return undefined;
    }
    if (
      brand === "[object Number]" ||
      brand === "[object String]" ||
      brand === "[object Boolean]" ||
      brand === "[object BigInt]"
    ) {
      return same(
        (ao as { valueOf(): unknown }).valueOf(),
        (eo as { valueOf(): unknown }).valueOf(),
        `${path}.valueOf()`,
      );
    }
    if (ao instanceof Map && eo instanceof Map) {
      if (ao.size !== eo.size) return `${path}: map size ${ao.size} vs ${eo.size}`;
      const ae = [...ao];
      const ee = [...eo];
      for (let i = 0; i < ae.length; i++) {
        const [ak, av] = ae[i] as [unknown, unknown];
        const [ek, ev] = ee[i] as [unknown, unknown];
        const d = same(ak, ek, `${path}<key ${i}>`) ?? same(av, ev, `${path}<value ${i}>`);
        if (d !== undefined) return d;
      }
      return undefined;
    }
    if (ao instanceof Set && eo instanceof Set) {
      if (ao.size !== eo.size) return `${path}: set size ${ao.size} vs ${eo.size}`;
      const ae = [...ao];
      const ee = [...eo];
      for (let i = 0; i < ae.length; i++) {
        const d = same(ae[i], ee[i], `${path}<${i}>`);
        if (d !== undefined) return d;
      }
      return undefined;
    }
    if (Array.isArray(ao) && Array.isArray(eo) && ao.length !== eo.length) {
      return `${path}: length ${ao.length} vs ${eo.length}`;
    }
    // Arrays and objects: the same own enumerable keys in the same order (so holes stay holes).
    const keysA = Object.keys(ao);
    const keysE = Object.keys(eo);
    if (keysA.join("\u0000") !== keysE.join("\u0000")) {
      return `${path}: keys [${keysA.join(",")}] vs [${keysE.join(",")}]`;
    }
    for (const key of keysE) {
      const d = same((ao as Record<string, unknown>)[key], (eo as Record<string, unknown>)[key], `${path}.${key}`);
      if (d !== undefined) return d;
    }
    return undefined;
  }

  return same(actual, expected, "value");
}

function sameBytes(a: Uint8Array, e: Uint8Array, path: string): string | undefined {
  if (a.byteLength !== e.byteLength) return `${path}: byteLength ${a.byteLength} vs ${e.byteLength}`;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== e[i]) return `${path}: byte ${i} is ${a[i]} vs ${e[i]}`;
  return undefined;
}

function describe(value: object): string {
  const proto = Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null;
  return proto === null ? "null" : (proto.constructor?.name ?? "anonymous");
}

/** Throws with the first difference if `actual` is not structurally identical to `expected`. */
export function expectSameValue(actual: unknown, expected: unknown): void {
  const difference = findDifference(actual, expected);
  if (difference !== undefined) throw new Error(`Values differ at ${difference}`);
}
