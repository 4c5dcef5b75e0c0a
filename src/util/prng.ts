/**
 * A small deterministic PRNG (SplitMix64) for SQL's `random()` and `randomblob()`. The storage core
 * reseeds it from (commit sequence, statement index) before every logged SQL write, so replaying the
 * commit log draws exactly the same numbers.
 */

const MASK_64 = (1n << 64n) - 1n;

/** SplitMix64 over BigInt: slow-ish per call, but only SQL that calls random() pays for it. */
export class SplitMix64 {
  #state = 0n;
  #seedA = 0;
  #seedB = 0;
  #seedPending = false;

  /**
   * Restarts the sequence from a seed derived from two integers. Lazily: most SQL writes never
   * call random(), so the BigInt work happens only when a value is drawn.
   */
  reseed(a: number, b: number): void {
    this.#seedA = a;
    this.#seedB = b;
    this.#seedPending = true;
  }

  /** The next unsigned 64-bit value. */
  nextUint64(): bigint {
    if (this.#seedPending) {
      this.#seedPending = false;
      this.#state = ((BigInt(this.#seedA) << 32n) ^ BigInt(this.#seedB) ^ 0x9e3779b97f4a7c15n) & MASK_64;
    }
    this.#state = (this.#state + 0x9e3779b97f4a7c15n) & MASK_64;
    let z = this.#state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
    return z ^ (z >> 31n);
  }

  /** The next signed 64-bit value (what SQLite's random() returns). */
  nextInt64(): bigint {
    return BigInt.asIntN(64, this.nextUint64());
  }

  /** `length` bytes. */
  nextBytes(length: number): Uint8Array {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i += 8) {
      let v = this.nextUint64();
      for (let j = i; j < Math.min(i + 8, length); j++) {
        out[j] = Number(v & 0xffn);
        v >>= 8n;
      }
    }
    return out;
  }
}
