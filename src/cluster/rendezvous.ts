/**
 * Rendezvous (highest-random-weight) hashing: every host computes, for an object, a score per live
 * member and picks the highest. No coordinator and no shared table: hosts that see the same members
 * pick the same owner, and when a member leaves only the objects it owned move (each to the member
 * that ranked next for it).
 */

/** A 53-bit hash of a string (two 32-bit lanes); stable across processes and platforms. */
export function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The members ranked for `key`, best first (ties, which need equal 53-bit scores, by member id). */
export function rendezvousRank(key: string, members: readonly string[]): string[] {
  return [...new Set(members)]
    .map((member) => ({ member, score: hash53(`${member}\u0000${key}`) }))
    .sort((a, b) => b.score - a.score || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0))
    .map((s) => s.member);
}

/** The owner of `key` among `members`, or `undefined` when there are none. */
export function rendezvousOwner(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const member of members) {
    const score = hash53(`${member}\u0000${key}`);
    if (score > bestScore || (score === bestScore && best !== undefined && member < best)) {
      best = member;
      bestScore = score;
    }
  }
  return best;
}
