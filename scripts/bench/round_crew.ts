/**
 * The hidden cost of a crew call (issue "Crews"; docs/crews.md): one `call-member` round trip on
 * loopback — the caller's tool call → the member takes the task → its answer is in the caller's
 * conversation — against a plain blocking `SendMessage` round trip to the same member from this
 * process. Both capsules are real `mur run`s of scripted capsules (the member answers at once), on
 * core 0 like the other scale rows; the call's figure is read from the caller's trace:
 *
 *   member_call.duration_ms (tool call → answer known) + task_continued − member_call (→ in the
 *   conversation, one continuation later)
 *
 * and the time to the member's first event (member_call_start − the call's start) is a fact
 * beside it. Medians over `calls` calls of each.
 */
import { kill, murCmd, spawnReady } from "./procs.ts";
import { median } from "./stats.ts";
import { type ScaleCtx, type TraceLine, writeScaleCapsule } from "./round_scale.ts";

const CALLER = {
  manifest: {
    inference: { driver: "scripted", script: "script.json" },
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
  },
  script: {
    tasks: [{
      match: "^call",
      turns: [
        { steps: [{ tool_call: { name: "call-member", input: { member: "m", task: "ping" } } }] },
        { steps: [{ text: "waiting" }] },
        { steps: [{ text: "done" }] },
      ],
    }],
  },
};

const MEMBER = {
  manifest: {
    inference: { driver: "scripted", script: "script.json" },
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    exports: { peer_tasks: { accept: true } },
  },
  script: { tasks: [{ turns: [{ steps: [{ text: "pong" }] }] }] },
};

async function send(url: string, text: string, id: string): Promise<void> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "SendMessage",
      params: { message: { messageId: id, role: "ROLE_USER", parts: [{ text }] } },
    }),
  });
  const body = await r.text();
  if (!body.includes("TASK_STATE_COMPLETED")) throw new Error(`${id}: ${body.slice(0, 200)}`);
}

export async function crewCall(ctx: ScaleCtx, dir: string, calls: number): Promise<void> {
  const label = "member call round trip (call-member → answer in the conversation): ms per call";
  ctx.log(`scale: ${calls} member calls against ${calls} plain SendMessage round trips`);
  const env = { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1" };
  const memberPath = await writeScaleCapsule(dir, "crew-member", MEMBER);
  const callerPath = await writeScaleCapsule(dir, "crew-caller", CALLER);
  let member, caller;
  try {
    member = await spawnReady({
      name: "mur run (member)",
      cmd: murCmd(memberPath, `${dir}/crew-member/wd`, []),
      env,
      core: 0,
      readyTimeoutMs: 30_000,
    });
    const memberUrl = `http://${String(member.ready.url).replace("localhost", "127.0.0.1")}`;
    const crewFile = `${dir}/crew.json`;
    await Deno.writeTextFile(
      crewFile,
      JSON.stringify({
        formation_id: "bench",
        members: [{ name: "m", url: memberUrl, token: "" }],
      }),
    );
    caller = await spawnReady({
      name: "mur run (caller)",
      cmd: murCmd(callerPath, `${dir}/crew-caller/wd`, []),
      env: { ...env, MURMUR_CREW_CALLEES: "m", MURMUR_CREW_FILE: crewFile },
      core: 0,
      readyTimeoutMs: 30_000,
    });
    const callerUrl = `http://${String(caller.ready.url).replace("localhost", "127.0.0.1")}/`;
    // The baseline: the same member, a blocking SendMessage from here.
    const plain: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      await send(`${memberUrl}/`, "ping", `plain-${i}`);
      plain.push(performance.now() - t0);
    }
    for (let i = 0; i < calls; i++) await send(callerUrl, `call ${i}`, `call-${i}`);
    const text = await Deno.readTextFile(`${caller.ready.session_dir}/trace.jsonl`);
    const lines = text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as TraceLine);
    const ends = lines.filter((l) => l.event_type === "member_call");
    const conts = lines.filter((l) => l.event_type === "task_continued");
    const starts = lines.filter((l) => l.event_type === "member_call_start");
    if (ends.length < calls || conts.length < calls) {
      throw new Error(`only ${ends.length} calls and ${conts.length} continuations were traced`);
    }
    const roundTrips = ends.map((e) => {
      const cont = conts.find((c) => (c.member_calls as string[]).includes(String(e.call_id)))!;
      return Number(e.duration_ms) + (cont.timestamp - e.timestamp);
    });
    const firstEvent = starts.map((s) => {
      const e = ends.find((x) => x.call_id === s.call_id)!;
      return s.timestamp - (e.timestamp - Number(e.duration_ms));
    });
    ctx.scale.add({
      label,
      mur: median(roundTrips),
      base: median(plain),
      baseLabel: "plain blocking SendMessage to the same member",
      unit: "ms",
      digits: 1,
    });
    ctx.scale.facts.push(
      `Member calls: the member held the task a median ${
        median(firstEvent).toFixed(1)
      } ms after the tool call (its first event); the rest of the round trip is the member's task, the follow stream's terminal status and GetTask, and the caller's turn that ends before the continuation.`,
    );
  } catch (e) {
    ctx.scale.missing(label, (e as Error).message);
  } finally {
    if (caller) kill(caller.pid);
    if (member) kill(member.pid);
  }
}

if (import.meta.main) {
  const { Scale, scaleTable } = await import("./scale.ts");
  const scale = new Scale();
  const dir = await Deno.makeTempDir({ prefix: "mur-crew-bench-" });
  try {
    await Deno.mkdir(`${dir}/home`, { recursive: true });
    await crewCall(
      { scale, log: console.error, turns: 0, hookTurns: 0, queued: 0 },
      dir,
      Number(Deno.args[0] ?? 30),
    );
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  console.log(scaleTable(scale));
  console.log(scale.facts.join("\n"));
}
