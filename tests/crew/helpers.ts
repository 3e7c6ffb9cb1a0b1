/**
 * Crews on real processes (docs/crews.md): members are `mur run` capsules started by hand, the
 * crew file the launcher would write is written here, and the caller is a scripted capsule whose
 * script makes the `call-member` calls.
 */
import { type Capsule, startCapsule } from "../helpers/capsule.ts";
import { readSse, streamRequest } from "../helpers/sse.ts";

export type { Capsule };

/** A member's task that runs until the test writes `release` into the member's workdir. */
export function gated(answer: Record<string, unknown>) {
  const wait = "until [ -e release ]; do sleep 0.05; done";
  return {
    turns: [
      { steps: [{ tool_call: { id: "gate", name: "bash", input: { command: wait } } }] },
      { steps: [answer] },
    ],
  };
}

/** Lets the member's gated tasks go on. */
export function release(cap: Capsule): Promise<void> {
  return Deno.writeTextFile(`${cap.ready.workdir}/release`, "");
}

/** A member capsule: takes tasks in turn and stays up. */
export function member(
  name: string,
  tasks: Record<string, unknown>[],
  o: {
    lifecycle?: Record<string, unknown>;
    network?: Record<string, unknown>;
    env?: Record<string, string>;
    /** false: the manifest leaves `exports.peer_tasks.accept` out (calls are refused 403). */
    consents?: boolean;
  } = {},
): Promise<Capsule> {
  return startCapsule({
    manifest: {
      name,
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", ...o.lifecycle },
      capabilities: { shell: { allow: ["bash"] } },
      // A member takes its callers' tasks (docs/door.md "Peer tasks and trust").
      ...(o.consents === false ? {} : { exports: { peer_tasks: { accept: true } } }),
      ...(o.network ? { network: o.network } : {}),
    },
    script: { tasks },
    env: o.env,
  });
}

export interface CrewEntry {
  name: string;
  url: string;
  token?: string;
}

/** The crew file as the launcher writes it. */
export async function writeCrew(path: string, members: CrewEntry[]): Promise<void> {
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      formation_id: "frm_test",
      members: members.map((m) => ({ name: m.name, url: m.url, token: m.token ?? "" })),
    }),
  );
}

/** The entry for a running member. */
export function entry(name: string, cap: Capsule, token?: string): CrewEntry {
  return { name, url: cap.base, token };
}

/** A caller capsule that may call `callees`, its turns scripted. */
export async function caller(
  callees: string[],
  tasks: Record<string, unknown>[],
  o: { lifecycle?: Record<string, unknown>; crewFile?: string; maxTurns?: number } = {},
): Promise<{ cap: Capsule; crewFile: string }> {
  const crewFile = o.crewFile ?? `${await Deno.makeTempDir({ prefix: "mur-crew-" })}/crew.json`;
  const cap = await startCapsule({
    manifest: {
      name: "lead",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", ...o.lifecycle },
      ...(o.maxTurns ? { inference: { max_turns: o.maxTurns } } : {}),
    },
    script: { tasks },
    env: { MURMUR_CREW_CALLEES: callees.join(","), MURMUR_CREW_FILE: crewFile },
  });
  return { cap, crewFile };
}

/** A scripted turn calling each member with a task. */
export function callTurn(calls: [string, string][]) {
  return {
    steps: calls.map(([m, task], i) => ({
      tool_call: { id: `call_${i}`, name: "call-member", input: { member: m, task } },
    })),
  };
}

/** The trace lines of a capsule's session (the door tests' reader). */
export { traceOf } from "../door/helpers.ts";

/** Closes every capsule (SIGKILL of its process tree, then its temp dir). */
export async function closeAll(caps: (Capsule | undefined)[]): Promise<void> {
  await Promise.all(caps.map((c) => c?.close()));
}

/** Follows a task's stream in the background: its WORKING statuses and final state. */
export function follow(cap: Capsule, text: string) {
  const seen = { statuses: [] as string[], final: "", taskId: "", contextId: "" };
  const done = (async () => {
    const res = await streamRequest(cap.base, "SendStreamingMessage", {
      message: { messageId: `m-${crypto.randomUUID()}`, role: "ROLE_USER", parts: [{ text }] },
    });
    // deno-lint-ignore no-explicit-any
    for await (const e of readSse(res.body!) as AsyncGenerator<{ data: any }>) {
      const r = e.data.result ?? {};
      if (r.task) {
        seen.taskId = r.task.id;
        seen.contextId = r.task.contextId;
      }
      const st = r.statusUpdate?.status;
      if (!st) continue;
      const said = st.message?.parts?.[0]?.text ?? "";
      if (st.state === "TASK_STATE_WORKING") seen.statuses.push(said);
      else seen.final = st.state;
    }
  })();
  return { seen, done };
}
