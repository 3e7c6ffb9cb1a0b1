/**
 * Runs a fast-check property with a stated number of cases and a seed that can be replayed
 * (issue 13: "seeds are printed on failure so a run can be replayed").
 *
 * - `MUR_PROPERTY_SEED=<n>` runs every property from that seed (a failure prints the seed it
 *   ran with, whether chosen or random);
 * - `MUR_PROPERTY_PATH=<p>` (with the seed) replays one shrunk counterexample directly;
 * - `MUR_PROPERTY_RUNS=<n>` changes the number of cases (CI runs the stated default);
 * - `MUR_PROPERTY_SHRINK=1` shrinks a counterexample before reporting it (off by default: the
 *   cases are large, shrinking one takes minutes; the seed and path replay it as found).
 *
 * On failure the thrown error starts with one line naming the property, the seed, the path and
 * the command to replay it; fast-check's own report (the counterexample) follows.
 */
import fc from "fast-check";

export interface PropertyRun {
  /** Names the property in the failure line. */
  name: string;
  /** Cases per run (at least 500 for the event-path properties, issue 13). */
  numRuns: number;
}

function envInt(name: string): number | undefined {
  const v = Deno.env.get(name);
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${v}`);
  return n;
}

/** The seed this process runs properties with: MUR_PROPERTY_SEED, else a random one. */
export function propertySeed(): number {
  return envInt("MUR_PROPERTY_SEED") ?? (Math.random() * 0x7fffffff) | 0;
}

/** Cases per property: MUR_PROPERTY_RUNS when set, else the property's stated count. */
export function propertyRuns(stated: number): number {
  return envInt("MUR_PROPERTY_RUNS") ?? stated;
}

function parameters<T>(run: PropertyRun): fc.Parameters<T> & { seed: number } {
  const seed = propertySeed();
  const path = Deno.env.get("MUR_PROPERTY_PATH") || undefined;
  const shrink = Deno.env.get("MUR_PROPERTY_SHRINK") === "1";
  return { seed, path, numRuns: propertyRuns(run.numRuns), endOnFailure: !shrink };
}

function failure(run: PropertyRun, seed: number, e: unknown): Error {
  const msg = e instanceof Error ? e.message : String(e);
  const path = /path: "([^"]*)"/.exec(msg)?.[1];
  const replay = `MUR_PROPERTY_SEED=${seed}` + (path ? ` MUR_PROPERTY_PATH=${path}` : "");
  const line = `property "${run.name}" failed: seed ${seed}${path ? `, path ${path}` : ""} ` +
    `(replay: ${replay} deno test -A <file> --filter '${run.name}')`;
  console.error(line);
  // A counterexample holds texts of up to 200 KiB: say its start, not all of it.
  const report = msg.length > 4000 ? `${msg.slice(0, 4000)}… (${msg.length} characters)` : msg;
  return new Error(`${line}\n${report}`, { cause: e });
}

/** Checks a synchronous property; throws with the replay line on failure. */
export function checkProperty<Ts extends [unknown, ...unknown[]]>(
  run: PropertyRun,
  prop: fc.IProperty<Ts>,
): number {
  const p = parameters<Ts>(run);
  try {
    fc.assert(prop, p);
  } catch (e) {
    throw failure(run, p.seed, e);
  }
  return p.numRuns!;
}

/** Checks an asynchronous property; throws with the replay line on failure. */
export async function checkAsyncProperty<Ts extends [unknown, ...unknown[]]>(
  run: PropertyRun,
  prop: fc.IAsyncProperty<Ts>,
): Promise<number> {
  const p = parameters<Ts>(run);
  try {
    await fc.assert(prop, p);
  } catch (e) {
    throw failure(run, p.seed, e);
  }
  return p.numRuns!;
}
