/**
 * Backoff between provider retries: exponential from `baseDelayMs`, capped, with full jitter on
 * the upper half so parallel capsules do not retry in step; a provider's `retry-after` is a
 * floor (capped too, so a far-off date cannot park a task for an hour).
 */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  random: () => number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 4,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
  random: Math.random,
};

/** The wait before retry number `retry` (1-based). */
export function backoffMs(policy: RetryPolicy, retry: number, retryAfterMs?: number): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const jittered = exp / 2 + (exp / 2) * policy.random();
  const floor = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, policy.maxDelayMs * 2);
  return Math.round(Math.max(jittered, floor));
}

/** Wait `ms`, or less when `signal` aborts; true when the whole wait passed. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (full: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(full);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", onAbort);
  });
}

export function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
