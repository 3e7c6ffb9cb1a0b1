/**
 * A session address (`@N`, a full `ses_` id, a unique suffix; docs/watch.md) →
 * the verified running record: alive, the same process, its door answering as that session.
 */
import { MurError } from "../errors.ts";
import { processStart } from "../process_liveness.ts";
import { probeCard } from "../watch/card_probe.ts";
import {
  listRunningRecords,
  liveness,
  liveRunningRecords,
  murmurHome,
  removeRunningRecord,
  runningDir,
  type RunningRecord,
} from "../home/running_records.ts";
import { murLine } from "../invocation.ts";

const addressHint = () =>
  `name a session as @1 (the newest), a full ses_ id, a unique suffix of at least 4 characters, or use --url HOST:PORT; \`${
    murLine("ps")
  }\` lists them`;

/** How to start a capsule, or reach one elsewhere: a hint when none is running. */
const startOne = () =>
  `start one with \`${
    murLine("run", "--manifest", "DIR")
  }\`, or use --url HOST:PORT for a door elsewhere`;

export type SessionAddress =
  | { kind: "ordinal"; n: number }
  | { kind: "id"; id: string }
  | { kind: "suffix"; suffix: string };

/** Reads a session address, or throws E-RUN-022 naming what is accepted. */
export function parseSessionAddress(address: string): SessionAddress {
  const ord = /^@(\d+)$/.exec(address);
  if (ord && Number(ord[1]) >= 1) return { kind: "ordinal", n: Number(ord[1]) };
  if (/^ses_[0-9a-f]{32}$/i.test(address)) return { kind: "id", id: address.toLowerCase() };
  if (/^[A-Za-z0-9_]{4,}$/.test(address)) return { kind: "suffix", suffix: address.toLowerCase() };
  throw new MurError("E-RUN-022", `'${address}' is not a session address`, addressHint());
}

export interface ResolveOptions {
  home?: string;
  /** Card probe timeout (ms). */
  timeoutMs?: number;
  /**
   * Accept a session whose door does not answer when its process is confirmed by its start
   * time (mur stop can still signal it). Otherwise an unanswered card is E-RUN-023.
   */
  allowUnanswered?: boolean;
}

export interface ResolvedSession {
  record: RunningRecord;
  /** Whether the card answered naming this session; when false, `reason` says why not. */
  answered: boolean;
  reason?: string;
}

/**
 * `@N`, a full `ses_` id or a unique suffix → the verified running record.
 * Errors: E-RUN-022 (nothing running there, ambiguous, malformed), E-RUN-023 (its door did not
 * answer as that session), E-RUN-028 (records unreadable).
 */
export async function resolveSession(
  address: string,
  opts: ResolveOptions = {},
): Promise<ResolvedSession> {
  const addr = parseSessionAddress(address);
  const home = opts.home ?? murmurHome();
  const all = await listRunningRecords(home);
  if (all.length === 0) {
    throw new MurError(
      "E-RUN-022",
      "no capsule is running on this machine",
      `${startOne()} (records: ${runningDir(home)})`,
    );
  }
  let rec: RunningRecord;
  if (addr.kind === "ordinal") {
    const { live } = await liveRunningRecords(home);
    if (live.length === 0) {
      throw new MurError(
        "E-RUN-022",
        "no capsule is running on this machine",
        startOne(),
      );
    }
    if (addr.n > live.length) {
      throw new MurError(
        "E-RUN-022",
        `'${address}' names no running capsule: ${live.length} ${
          live.length === 1 ? "is" : "are"
        } running`,
        `\`${murLine("ps")}\` lists them, newest (@1) first`,
      );
    }
    rec = live[addr.n - 1];
  } else {
    const matches = addr.kind === "id"
      ? all.filter((r) => r.session_id === addr.id)
      : all.filter((r) => r.session_id.toLowerCase().endsWith(addr.suffix));
    if (matches.length === 0) {
      throw new MurError(
        "E-RUN-022",
        `no running capsule matches '${address}'`,
        `\`${murLine("ps")}\` lists the running sessions`,
      );
    }
    if (matches.length > 1) {
      throw new MurError(
        "E-RUN-022",
        `'${address}' is ambiguous: it matches ${matches.map((m) => m.session_id).join(", ")}`,
        "give more characters, or the full ses_ id",
      );
    }
    rec = matches[0];
    const l = await liveness(rec);
    if (!l.alive) {
      await removeRunningRecord(rec.session_id, home);
      throw new MurError(
        "E-RUN-022",
        `${rec.session_id} is not running: ${l.reason}`,
        `its record was removed; \`${murLine("ps")}\` lists the sessions still running`,
      );
    }
  }
  const probe = await probeCard(rec.url, rec.tokens?.operator, opts.timeoutMs);
  let reason: string | undefined;
  if (probe.ok && probe.sessionId !== rec.session_id) {
    reason = `the capsule at ${rec.url} answers for session ${probe.sessionId}`;
  } else if (!probe.ok) reason = probe.reason;
  if (reason === undefined) return { record: rec, answered: true };
  const confirmed = rec.process_start !== undefined &&
    (await processStart(rec.pid)) === rec.process_start;
  if (opts.allowUnanswered && confirmed) return { record: rec, answered: false, reason };
  throw new MurError(
    "E-RUN-023",
    `${rec.session_id} is running but its capsule did not answer at ${rec.url}: ${reason}`,
    `the capsule may be busy or starting; try again, or \`${murLine("stop", rec.session_id)}\``,
  );
}
