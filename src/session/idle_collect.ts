/**
 * What an idle capsule gives back: once the session's worker has had nothing to do for
 * IDLE_COLLECT_MS, one full collection that also returns V8's emptied heap pages to the system.
 *
 * V8 collects when it allocates, so a capsule that sits waiting for a task keeps the heap its start
 * grew to: ten idle capsules held 25.2 MiB PSS each 8 s after readiness, and 20.8 MiB after this
 * collection (docs/benchmarks.md "Cost per session"). `gc()` exists only when V8 runs with
 * `--expose-gc`, which the installed `mur` passes (src/module_root.ts BUNDLE_RUN_FLAGS); without it
 * nothing is collected here. The "last-resort" flavor is what V8 does on a low-memory
 * notification (several major collections, then the freed pages unmapped); a plain `gc()` frees
 * the objects but keeps the pages, and the capsule's PSS did not move.
 */

/** Quiet this long (no task run, none queued) before an idle capsule collects, once. */
export const IDLE_COLLECT_MS = 5_000;

type GcOptions = { type: "major"; execution: "sync"; flavor: "last-resort" };

/** The collection, when V8 exposes one; null otherwise. */
export function idleCollector(): (() => void) | null {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== "function") return null;
  return () =>
    (gc as (o: GcOptions) => void)({
      type: "major",
      execution: "sync",
      flavor: "last-resort",
    });
}

/**
 * Arms one collection after `afterMs`; the returned function disarms it (the idle period ended
 * first). The timer does not keep the process alive.
 */
export function armIdleCollect(
  collect: (() => void) | null,
  afterMs: number,
): () => void {
  if (collect === null) return () => {};
  const timer = setTimeout(collect, afterMs);
  Deno.unrefTimer(timer);
  return () => clearTimeout(timer);
}
