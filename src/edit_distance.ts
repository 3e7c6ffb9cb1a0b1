/**
 * How far apart two short words are, for "did you mean": a manifest key (src/manifest/suggest.ts)
 * or a command name (src/cli/main.ts). Kept apart from both so the command line's start graph does
 * not load the manifest schema.
 */
/** Edit distance (insert, delete, substitute, swap two neighbours) between two short words. */
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** The one of `known` nearest to `word` when it is within a slip (two edits, a third of its length at least one), else undefined. */
export function nearest(word: string, known: readonly string[]): string | undefined {
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(word, k);
    if (d <= Math.max(1, Math.min(2, Math.floor(k.length / 3))) && (!best || d < best.d)) {
      best = { k, d };
    }
  }
  return best?.k;
}
