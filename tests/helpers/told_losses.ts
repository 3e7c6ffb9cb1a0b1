/**
 * A watcher's losses proven, not guessed (docs/protocol.md "Slow readers", "Replay"): the ids it
 * received rise with none twice, and every hole among them — from where it started to its first
 * id, and between any two — is exactly what the `lagged` frames (`missed`) and the `gap` frame
 * (`firstAvailableId`) written in that hole told it. So received + told = written, hole by hole: a
 * count that merely adds up elsewhere, or an event lost without a word, fails here.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";

/** An unnumbered frame that tells of a loss, and where it came among the ids. */
export interface Telling {
  /** How many ids the watcher had received when this frame came. */
  at: number;
  /** A `lagged` frame's count. */
  missed?: number;
  /** A `gap` frame: the replay resumes at this id. */
  firstAvailableId?: number;
}

/** `lagged`/`gap` frames out of unnumbered frames' JSON text (other frames give null). */
export function tellingOf(json: string, at: number): Telling | null {
  const lagged = /"frame":"lagged".*?"missed":(\d+)/.exec(json);
  if (lagged) return { at, missed: Number(lagged[1]) };
  const gap = /"frame":"gap".*?"firstAvailableId":(\d+)/.exec(json);
  if (gap) return { at, firstAvailableId: Number(gap[1]) };
  return null;
}

/**
 * Checks `ids` (in arrival order) against what `told` said, for a watcher whose last seen id was
 * `from` (its Last-Event-ID) and that read up to `last`. Returns the two counts, which sum to
 * `last - from`.
 */
export function provenLosses(
  ids: number[],
  told: Telling[],
  from: number,
  last: number,
): { received: number; told: number } {
  let prev = from;
  let total = 0;
  let t = 0;
  for (let k = 0; k <= ids.length; k++) {
    // What the frames that came before ids[k] (and after ids[k-1]) told.
    let said = 0;
    for (; t < told.length && told[t].at <= k; t++) {
      const f = told[t];
      said += f.missed ?? (f.firstAvailableId! - prev - 1);
    }
    const next = k < ids.length ? ids[k] : last + 1;
    assert(next > prev, `id ${next} came after ${prev}: ids must rise, none twice`);
    assertEquals(
      said,
      next - prev - 1,
      `between id ${prev} and ${next === last + 1 ? "the end" : `id ${next}`}: ${
        next - prev - 1
      } event(s) missing, ${said} told`,
    );
    total += said;
    prev = next;
  }
  return { received: ids.length, told: total };
}
