/**
 * One session per workdir (docs/running.md "Files"): a session holds `<workdir>/.murmur/live.json` while it
 * runs. A second `mur run` on the same workdir finds it, checks the holder is alive (its pid runs
 * and started when the lock says) and is refused with E-RUN-043 naming that session; a lock left
 * by a session that was killed is taken over. Two runs racing for a free workdir cannot both win:
 * the lock is written whole to a file of its own, then hard-linked into place, which fails when
 * the name exists (a reader never sees a half-written lock).
 */
import { MurError } from "../errors.ts";
import { pidAlive, processStart } from "../process_liveness.ts";
import { murLine } from "../invocation.ts";

export interface WorkdirLock {
  path: string;
  /** Removes the lock (and `.murmur/` when nothing else is in it). Safe to call twice. */
  release(): void;
}

interface Holder {
  session_id: string;
  pid: number;
  process_start: string | null;
  started_at: string;
}

function readHolder(path: string): Holder | null {
  try {
    const h = JSON.parse(Deno.readTextFileSync(path));
    return typeof h?.session_id === "string" && typeof h?.pid === "number" ? h as Holder : null;
  } catch {
    return null;
  }
}

async function alive(h: Holder): Promise<boolean> {
  if (!(await pidAlive(h.pid))) return false;
  if (h.process_start === null) return true;
  const now = await processStart(h.pid);
  return now === null || now === h.process_start;
}

/**
 * Takes the workdir for `sessionId`, or throws E-RUN-043 when a live session holds it.
 * `shown` is the workdir as the user named it, for the message.
 */
export async function lockWorkdir(
  root: string,
  sessionId: string,
  shown: string,
): Promise<WorkdirLock> {
  const dir = `${root}/.murmur`;
  const path = `${dir}/live.json`;
  Deno.mkdirSync(dir, { recursive: true });
  const holder: Holder = {
    session_id: sessionId,
    pid: Deno.pid,
    process_start: await processStart(Deno.pid),
    started_at: new Date().toISOString(),
  };
  const tmp = `${path}.${Deno.pid}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(holder) + "\n", { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        Deno.linkSync(tmp, path);
        let released = false;
        return {
          path,
          release() {
            if (released) return;
            released = true;
            if (readHolder(path)?.session_id !== sessionId) return;
            try {
              Deno.removeSync(path);
              Deno.removeSync(dir); // only when empty; other sessions' folders keep it
            } catch { /* see above */ }
          },
        };
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      }
      const other = readHolder(path);
      if (other && (await alive(other))) {
        throw new MurError(
          "E-RUN-043",
          `the workdir ${shown} holds a live session, ${other.session_id} (pid ${other.pid}, started ${other.started_at})`,
          `one session runs in a workdir at a time: give another --workdir, or end that session (\`${
            murLine("stop", other.session_id)
          }\`)`,
        );
      }
      // A lock whose holder is gone (the session was killed): take it over.
      try {
        Deno.removeSync(path);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    }
  } finally {
    try {
      Deno.removeSync(tmp);
    } catch { /* already gone */ }
  }
  throw new MurError(
    "E-RUN-043",
    `the workdir ${shown} is being taken by another session at this moment`,
    "give another --workdir, or try again",
  );
}
