/**
 * What `mur run` says about its session (docs/running.md): the running
 * record other commands find it by, the readiness lines (or one `--json` line), and at the end
 * the status line with E-RUN-040 naming the task that decided a status other than ok.
 */
import { errorMessage, MurError, warningLine } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Session, SessionStatus } from "../session/session.ts";
import type { Workdir } from "../session/workdir.ts";
import { pageUrl } from "../ui/routes.ts";
import { murLine, murPath } from "../invocation.ts";
import { runningDir, writeRunningRecord } from "../home/running_records.ts";
import { type Inventory, skillsLine } from "../stage/inventory.ts";

export interface Announced {
  sessionId: string;
  manifest: Manifest;
  workdir: Workdir;
  /** The door's `localhost:<port>` and, on an authenticated door, its tokens. */
  address: string;
  tokens: Record<string, string> | null;
  /** A public door of a capsule with `approvals:`: the operator's token for answering one. */
  approvalToken?: string | null;
  /** Where spans go and which setting said so, when they are exported (src/otel/config.ts). */
  otel?: { url: string; source: string };
  /** The push signing secret, when push is on (docs/push.md). */
  pushSecret?: string;
  /** The formation this session is a member of (src/crew/formation/membership.ts). */
  formation?: { formationId: string; door?: { member: string } };
  /** What the capsule offers (src/stage/inventory.ts): `-v` prints its skills. */
  inventory?: Inventory;
  /** The launch task's id (`--task` or task.md), when there is one. */
  launchTaskId?: string;
  /** `containment: <class> (…)`, for `-v` (src/containment/launch.ts). */
  containment?: string;
}

/** The running record; one that cannot be written leaves the session reachable by URL only. */
export async function recordRunning(a: Announced): Promise<void> {
  try {
    await writeRunningRecord({
      session_id: a.sessionId,
      url: a.address,
      pid: Deno.pid,
      capsule_name: a.manifest.name,
      capsule_version: a.manifest.version,
      workdir: a.workdir.root,
      session_dir: a.workdir.session,
      started_at: new Date().toISOString(),
      ...(a.tokens ? { tokens: a.tokens as { operator: string } } : {}),
      ...(a.approvalToken ? { approval_token: a.approvalToken } : {}),
      ...(a.formation ? { formation_id: a.formation.formationId } : {}),
      ...(a.formation?.door ? { formation_member: a.formation.door.member } : {}),
    });
  } catch (e) {
    console.error(warningLine(
      "W-SEC-023",
      `this session's record under ~/.murmur/running/ could not be written, so \`mur watch\` and \`mur cancel\` cannot reach it by session address — only by the URL it announces: ${
        errorMessage(e)
      }`,
    ));
  }
}

/** The readiness lines on stdout: url and session (-v: more), or one JSON line. */
export function announce(a: Announced, o: { json?: boolean; verbose?: boolean }): void {
  if (o.json) {
    console.log(JSON.stringify({
      url: a.address,
      pid: Deno.pid,
      session_id: a.sessionId,
      name: a.manifest.name,
      version: a.manifest.version,
      workdir: a.workdir.root,
      session_dir: a.workdir.session,
      ...(a.tokens ? { tokens: a.tokens } : {}),
      ...(a.approvalToken ? { approval_token: a.approvalToken } : {}),
      ...(a.pushSecret ? { push_secret: a.pushSecret } : {}),
      ...(a.launchTaskId ? { task_id: a.launchTaskId } : {}),
    }));
    return;
  }
  console.log(`murmur: url ${a.address}`);
  console.log(`session: ${a.sessionId}`);
  if (o.verbose) {
    console.log(`workdir: ${a.workdir.root}`);
    if (a.workdir.session !== a.workdir.root) console.log(`session dir: ${a.workdir.session}`);
    console.log(`manifest: ${a.manifest.path}`);
    console.log(`driver: ${a.manifest.inference.driver}`);
    if (a.containment) console.log(a.containment);
    if (a.inventory) console.log(`skills: ${skillsLine(a.inventory)}`);
    console.log(`page: ${pageUrl(a.address)}`);
    if (a.otel) console.log(`otel: ${a.otel.url} (${a.otel.source})`);
    // An authenticated door: where its tokens are, never the tokens themselves (a terminal's
    // scrollback is not a secret store); watch and stop below present the operator's.
    if (a.tokens) {
      console.log(
        `tokens: ${Object.keys(a.tokens).join(", ")} (in ${
          murPath(`${runningDir()}/${a.sessionId}.json`)
        }; mur run --json prints them)`,
      );
    }
    if (a.approvalToken) {
      console.log(
        `approval token: in ${
          murPath(`${runningDir()}/${a.sessionId}.json`)
        } (approval_token; mur approve and mur deny present it)`,
      );
    }
    // Command lines that run as printed where the user stands (src/invocation.ts).
    console.log(`watch: ${murLine("watch", a.sessionId)}`);
    console.log(`stop: ${murLine("stop", a.sessionId)}`);
  }
}

/** The status line, and E-RUN-040 naming the task that decided a status other than ok. */
export function reportStatus(
  status: SessionStatus,
  session: Session,
  o: { json?: boolean; sessionId: string; workdir: Workdir },
): void {
  if (!o.json) console.log(`status: ${status}`);
  const waited = session.waitedForNoTask;
  if (waited !== null) {
    console.error(warningLine(
      "W-RUN-004",
      `no task came: the session waited ${
        waited / 1000
      } s for one (no --task, no task.md, nothing sent to its door) and ended without running any; give --task TEXT, or send a task sooner (MURMUR_A2A_TIMEOUT_SECS sets the wait)`,
    ));
  }
  if (status === "ok") return;
  // Name the deciding task whose ending set the status, and its own final status message.
  const by = session.decidedBy;
  const part = by?.status.message?.parts[0];
  const text = part && "text" in part ? part.text : status;
  const which = by ? `${by.source === "task_md" ? "the launch task" : "task"} ${by.id}` : null;
  console.error(
    new MurError(
      "E-RUN-040",
      which ? `${which} ended ${status}: ${text}` : `the session ended ${status}`,
      `read ${murPath(o.workdir.resultFile)}, and run \`${
        murLine("trace", "show", murPath(o.workdir.session))
      }\``,
    ).format(),
  );
}
