/**
 * `murmur.PollSession`: the session's stream for a client that cannot hold one open (serverless
 * callers, proxies that buffer SSE). It reads the same log and replay buffer as
 * `murmur.WatchSession` (docs/protocol.md "Long poll"): every buffered event after `cursor`, each
 * as the StreamResponse a watch would carry, with a `gap` exactly where a watch's replay from the
 * same id would write one. With nothing after the cursor it waits up to `waitSecs` for the next
 * event. A poll holds no subscription, so a client that never comes back costs nothing; one that
 * comes back later than 512 events is told by the `gap` what it lost.
 */
import type { EventLog } from "../events/log.ts";
import type { CallContext } from "./call_context.ts";
import { invalidParams } from "./jsonrpc.ts";
import { MAX_WAIT_SECS, type ParamsOf, parseParams } from "../a2a/spec.ts";

/** The longest a poll waits for an event: under the idle timeouts of common proxies (60 s). */
export { MAX_WAIT_SECS };
/** An answer stops adding events past this many bytes of them (one event always fits). */
export const POLL_BYTES = 4 * 1024 * 1024;

export interface PollResult {
  /** The id of the last event in `events`, else the cursor asked for: the next poll's cursor. */
  cursor: number;
  events: { id: number; data: unknown }[];
  /** The events after the cursor were evicted, or the cursor was never issued. */
  gap?: { firstAvailableId: number };
  /** The session's stream has ended and nothing after `cursor` is left: stop polling. */
  closed: boolean;
}

const dec = new TextDecoder();

export function pollSession(
  ctx: CallContext,
  params: ParamsOf<"murmur.PollSession">,
): Promise<PollResult> {
  return pollOf(ctx.session.log, params);
}

/** A poll of any event log: a capsule's, or an edge's mirror of one (src/edge/). */
export function pollLog(log: EventLog, params: Record<string, unknown>): Promise<PollResult> {
  const read = parseParams("murmur.PollSession", params);
  if (!read.ok) throw invalidParams(read.message);
  return pollOf(log, read.params);
}

async function pollOf(log: EventLog, params: ParamsOf<"murmur.PollSession">): Promise<PollResult> {
  const { cursor = 0, waitSecs = 0, maxEvents = 512 } = params;
  // Only a client that has everything waits; a cursor never issued gets its gap at once.
  if (cursor === log.lastId) await log.waitAfter(cursor, waitSecs * 1000);
  const replay = log.replay(cursor);
  const events: PollResult["events"] = [];
  let bytes = 0;
  for (const e of replay.entries) {
    if (events.length === maxEvents) break;
    bytes += e.activated.length;
    if (events.length > 0 && bytes > POLL_BYTES) break;
    events.push({ id: e.id, data: JSON.parse(dec.decode(e.activated)) });
  }
  const last = events.at(-1)?.id ?? cursor;
  return {
    cursor: last,
    events,
    ...(replay.gap !== null ? { gap: { firstAvailableId: replay.gap } } : {}),
    closed: log.closed && last >= log.lastId,
  };
}
