/**
 * What `mur watch` finds when it looks again after its connection was lost (docs/watch.md "When
 * the stream ends"): the seed's `E-IO-003` line says only that the stream ended early, so the
 * watch then tells the session's end as an end, from what this machine can see:
 *
 * 1. the stream's own last words, `:session-end status=<status>` (src/events/view.ts), or the
 *    session's trace ending in `session_end` (its `exit_status`): the capsule ended;
 * 2. else its running record, still there with its process alive (its door answering, or the
 *    process still there DYING_MS on): it may still be running, and only then is the reattach
 *    hint printed;
 * 3. else (record gone or its process dead, no `session_end`): the capsule is gone without ending
 *    its session (killed);
 * 4. a door given by `--url` with no record on this machine: its card, answering or not.
 */
import { probeCard } from "../watch/card_probe.ts";
import { listRunningRecords, liveness, type RunningRecord } from "../home/running_records.ts";

export interface FreshLook {
  /** The capsule has ended (or is gone): no reattach hint. */
  ended: boolean;
  /** One line, without the `[murmur] ` prefix. */
  line: string;
}

/** The `exit_status` of the session's `session_end`, read from the trace's last 64 KiB. */
export async function traceEnding(record: RunningRecord): Promise<string | null> {
  const path = `${record.session_dir ?? record.workdir}/trace.jsonl`;
  let text: string;
  try {
    using f = await Deno.open(path);
    const size = (await f.stat()).size;
    const from = Math.max(0, size - 65_536);
    await f.seek(from, Deno.SeekMode.Start);
    const buf = new Uint8Array(size - from);
    let got = 0;
    while (got < buf.length) {
      const n = await f.read(buf.subarray(got));
      if (n === null) break;
      got += n;
    }
    text = new TextDecoder().decode(buf.subarray(0, got));
  } catch {
    return null;
  }
  for (const line of text.split("\n").reverse()) {
    if (!line.includes('"session_end"')) continue;
    try {
      const e = JSON.parse(line);
      if (e.event_type === "session_end" && e.session_id === record.session_id) {
        return typeof e.exit_status === "string" ? e.exit_status : "unknown";
      }
    } catch { /* a line cut short: not the end */ }
  }
  return null;
}

/** Looks again: `record` is the session's, when the watch found it on this machine. */
export async function freshLook(
  url: string,
  record: RunningRecord | undefined,
  streamEnding: string | undefined,
  home?: string,
): Promise<FreshLook> {
  if (streamEnding !== undefined) {
    return {
      ended: true,
      line: `the capsule ended: status ${streamEnding} (its stream said so as it closed)`,
    };
  }
  if (record) {
    const ending = await traceEnding(record);
    const still = (await listRunningRecords(home)).find((r) => r.session_id === record.session_id);
    const alive = still !== undefined && (await liveness(still)).alive;
    if (ending !== null) {
      return {
        ended: true,
        line: `the capsule ended: status ${ending} (${
          still ? "it is closing" : "its running record is gone"
        }; its trace ends with session_end)`,
      };
    }
    // A killed capsule's socket closes a moment before its process is gone: a process whose
    // door no longer answers is given that moment (bounded) before it counts as running.
    if (alive && (await doorAnswers(url) || await aliveAfter(still!, DYING_MS))) {
      return {
        ended: false,
        line: "its running record is still there and its process is alive",
      };
    }
    return {
      ended: true,
      line: `the capsule is gone without ending its session: ${
        still ? "its process is not running" : "its running record is gone"
      } and its trace has no session_end (killed?)`,
    };
  }
  const probe = await probeCard(url, undefined, 2000);
  if (probe.ok) return { ended: false, line: `its door still answers at ${url}` };
  return { ended: true, line: `nothing answers at ${url} now (${probe.reason})` };
}

/** How long a process whose door is closed may take to be gone before it counts as running. */
const DYING_MS = 2_000;

async function doorAnswers(url: string): Promise<boolean> {
  return (await probeCard(url, undefined, 2000)).ok;
}

/** Whether the record's process is still alive after `ms` (looked at every 50 ms until gone). */
async function aliveAfter(record: RunningRecord, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!(await liveness(record)).alive) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return (await liveness(record)).alive;
}
