/**
 * Seeded randomness for the reliability suites, so a failure reproduces: every suite prints its
 * seed, and `MURMUR_RELIABILITY_SEED=<n>` replays it. Also the one place the suites print their
 * counts (`reliability: <what>: <n>`), which CI logs show.
 */

export type Rand = () => number;

/** mulberry32: small, fast, and good enough to pick mutations. */
export function prng(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The suite's seed: `MURMUR_RELIABILITY_SEED` when set, else a fresh one; printed either way. */
export function suiteSeed(suite: string): number {
  const fixed = Deno.env.get("MURMUR_RELIABILITY_SEED");
  const seed = fixed !== undefined && /^\d+$/.test(fixed)
    ? Number(fixed) >>> 0
    : crypto.getRandomValues(new Uint32Array(1))[0];
  console.log(`reliability: ${suite}: seed ${seed} (MURMUR_RELIABILITY_SEED=${seed} replays it)`);
  return seed;
}

export function report(what: string, n: number | string): void {
  console.log(`reliability: ${what}: ${n}`);
}

export const int = (r: Rand, lo: number, hi: number): number =>
  lo + Math.floor(r() * (hi - lo + 1));
export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
export const chance = (r: Rand, p: number): boolean => r() < p;
/** A size spread over orders of magnitude: 2^lo … 2^hi. */
export const logSize = (r: Rand, lo: number, hi: number): number =>
  Math.floor(2 ** (lo + r() * (hi - lo)));

/** Runs `work(i)` for i in [0, n) with `width` calls in flight. */
export async function pool(
  n: number,
  width: number,
  work: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, n) }, async () => {
    while (next < n) await work(next++);
  });
  await Promise.all(lanes);
}
