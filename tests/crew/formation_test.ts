/**
 * `mur run --roster` on real processes (src/crew/formation/launch.ts): a formation of three comes up with
 * one readiness line, wires its callers with edge tokens that reach only what an edge allows,
 * and ends together however it ends — the entry member's end, SIGTERM, SIGKILL of the launcher,
 * a member killed mid-run.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { pidAlive } from "../../src/process_liveness.ts";
import type { CrewFile } from "../../src/crew/calls/crew_file.ts";
import { runMur, spawnMur } from "../cli/helpers.ts";
import { until } from "../helpers/until.ts";
import {
  call,
  launch,
  type Launched,
  message,
  THREE,
  writeFormation,
} from "./formation_helpers.ts";

const NAMES = ["lead", "coder", "reviewer"];

function crewOf(f: Launched, name: string): CrewFile {
  return JSON.parse(
    Deno.readTextFileSync(`${f.home}/formations/${f.line.formation_id}/${name}.crew.json`),
  );
}

function record(f: Launched, sessionId: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(Deno.readTextFileSync(`${f.home}/running/${sessionId}.json`));
  } catch {
    return undefined;
  }
}

async function allGone(pids: number[]): Promise<boolean | undefined> {
  for (const p of pids) if (await pidAlive(p)) return undefined;
  return true;
}

function lastEvent(sessionDir: string): string {
  const lines = Deno.readTextFileSync(`${sessionDir}/trace.jsonl`).trim().split("\n");
  return JSON.parse(lines.at(-1)!).event_type;
}

Deno.test("formation: three members come up with one line, callers are wired, the entry's end ends all", async () => {
  const f = await launch(await writeFormation(NAMES, THREE));
  try {
    const { line } = f;
    assert(/^frm_[0-9a-f]{32}$/.test(line.formation_id));
    assertEquals(line.entry, "lead");
    assertEquals(line.members.map((m) => m.name), NAMES);
    assertEquals(line.url, line.members[0].url);
    for (const m of line.members) {
      // A member's door authenticates: the card naming the session is the extended one.
      const rec = record(f, m.session_id!)!;
      const operator = (rec.tokens as Record<string, string>).operator;
      const card = await call(m.url, "GetExtendedAgentCard", {}, operator);
      assert(
        JSON.stringify(card.body).includes(m.session_id!),
        `${m.name}'s door serves its session`,
      );
      const open = await (await fetch(`${m.url}/.well-known/agent-card.json`)).json();
      assertEquals(open.capabilities.extendedAgentCard, true);
      assertEquals(rec.formation_id, line.formation_id);
      assertEquals(rec.formation_member, m.name);
    }
    const frm = JSON.parse(
      Deno.readTextFileSync(`${f.home}/running/${line.formation_id}.json`),
    );
    assertEquals(frm.launcher_pid, f.proc.pid);
    // The callers' crew files: exactly their callees, roster order; no door file is left.
    const byName = Object.fromEntries(line.members.map((m) => [m.name, m]));
    assertEquals(crewOf(f, "lead").members.map((m) => [m.name, m.url]), [
      ["coder", byName.coder.url],
      ["reviewer", byName.reviewer.url],
    ]);
    assertEquals(crewOf(f, "reviewer").members.map((m) => m.name), ["coder"]);
    const files = [...Deno.readDirSync(`${f.home}/formations/${line.formation_id}`)].map((e) =>
      e.name
    ).sort();
    assertEquals(files, ["lead.crew.json", "reviewer.crew.json"]);
    assertEquals(
      Deno.statSync(`${f.home}/formations/${line.formation_id}/lead.crew.json`).mode! & 0o777,
      0o600,
    );
    assertEquals(Deno.statSync(`${f.home}/formations/${line.formation_id}`).mode! & 0o777, 0o700);

    const sessionDirs = line.members.map((m) => record(f, m.session_id!)!.session_dir as string);
    // The entry member runs one task (sent with its operator token) and ends: so do the others.
    const leadRecord = record(f, byName.lead.session_id!)!;
    const operator = (leadRecord.tokens as Record<string, string>).operator;
    const sent = await call(line.url, "SendMessage", message("go"), operator);
    assertEquals(sent.status, 200);
    const st = await f.proc.status;
    assertEquals(st.code, 0);
    assert(await allGone(f.pids()), "every member has exited");
    for (const m of line.members) {
      assertEquals(record(f, m.session_id!), undefined, `${m.name}'s record is removed`);
    }
    for (const d of sessionDirs) assertEquals(lastEvent(d), "session_end");
    assert(!(await Deno.stat(`${f.home}/running/${line.formation_id}.json`).catch(() => null)));
    assert(!(await Deno.stat(`${f.home}/formations/${line.formation_id}`).catch(() => null)));
    const err = await f.stderr;
    assert(err.includes("[coder] [mur run] lifeline closed"), err);
  } finally {
    await f.close();
  }
});

Deno.test("formation: an edge token reaches its callee's member-call methods and nothing else (403)", async () => {
  const f = await launch(await writeFormation(NAMES, THREE));
  try {
    const byName = Object.fromEntries(f.line.members.map((m) => [m.name, m]));
    const leadToCoder = crewOf(f, "lead").members.find((m) => m.name === "coder")!.token;
    const leadToReviewer = crewOf(f, "lead").members.find((m) => m.name === "reviewer")!.token;
    const reviewerToCoder = crewOf(f, "reviewer").members[0].token;
    const coder = byName.coder.url;

    // Along the edge: SendMessage as a peer, GetTask of its own task.
    const sent = await call(coder, "SendMessage", message("review this"), leadToCoder, {
      "x-murmur-task-origin": "peer",
    });
    assertEquals(sent.status, 200);
    const task = (sent.body.result as { task: { id: string; status: { state: string } } }).task;
    assertEquals(task.status.state, "TASK_STATE_COMPLETED");
    const got = await call(coder, "GetTask", { id: task.id }, leadToCoder);
    assertEquals((got.body.result as { id: string }).id, task.id);
    // Another caller's task is not there for it.
    const other = await call(coder, "GetTask", { id: task.id }, reviewerToCoder);
    assertEquals((other.body.error as { code: number }).code, -32001);

    // A method outside the edge: 403 insufficient_scope.
    for (const method of ["ListTasks", "murmur.WatchSession", "murmur.StopSession"]) {
      const r = await call(coder, method, {}, leadToCoder);
      assertEquals(r.status, 403, method);
      assertEquals(r.body.error, "insufficient_scope");
      assertEquals(r.body.message, `credential 'member:lead' does not reach ${method}`);
    }
    // A caller with no edge to this door: its token for another member is 403 not_permitted.
    const res = await fetch(`${byName.reviewer.url}/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "a2a-version": "1.0",
        authorization: `Bearer ${reviewerToCoder}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: message("x") }),
    });
    assertEquals(res.status, 403);
    assertEquals(await res.json(), {
      error: "not_permitted",
      message: "member 'reviewer' may not call this capsule",
    });
    // lead → reviewer is an edge; reviewer has no edge into lead (the entry): its only token is
    // refused there too, and a token altered by one character is not one this formation minted.
    const intoLead = await call(f.line.url, "GetTask", { id: task.id }, reviewerToCoder);
    assertEquals(intoLead.status, 403);
    const forged = leadToReviewer.slice(0, -2) + (leadToReviewer.endsWith("A") ? "BB" : "AA");
    const refused = await call(byName.reviewer.url, "GetTask", { id: "x" }, forged);
    assertEquals(refused.status, 401);
    // A 401 says where this member's own token is: its running record, which mur ps reads.
    const reviewer = byName.reviewer.session_id!;
    const record = `${f.home}/running/${reviewer}.json`;
    for (const r of [refused, await call(byName.reviewer.url, "ListTasks", {})]) {
      assertEquals(r.status, 401);
      const said = r.body.message as string;
      assert(
        said.includes(
          `this door is member 'reviewer' of formation ${f.line.formation_id}: its operator token is tokens.operator in its running record, ${record}`,
        ),
        said,
      );
      assert(/ ps` lists the formation's members/.test(said), said);
    }
    const operator = JSON.parse(await Deno.readTextFile(record)).tokens.operator as string;
    assertEquals((await call(byName.reviewer.url, "ListTasks", {}, operator)).status, 200);
  } finally {
    await f.close();
  }
});

Deno.test("formation: SIGTERM to the launcher stops every member cleanly (session_end, records gone), exit as the entry ended: 0", async () => {
  const f = await launch(await writeFormation(NAMES, THREE));
  try {
    f.proc.kill("SIGTERM");
    const st = await f.proc.status;
    assertEquals(st.code, 0);
    assert(await allGone(f.pids()));
    for (const m of f.line.members) assertEquals(record(f, m.session_id!), undefined);
  } finally {
    await f.close();
  }
});

Deno.test("formation: SIGKILL of the launcher leaves no member running (the lifeline)", async () => {
  const f = await launch(await writeFormation(NAMES, THREE));
  try {
    const sessionDirs = f.line.members.map((m) => record(f, m.session_id!)!.session_dir as string);
    Deno.kill(f.proc.pid, "SIGKILL");
    await f.proc.status;
    await until("every member gone", () => allGone(f.pids()), 30_000);
    for (const m of f.line.members) assertEquals(record(f, m.session_id!), undefined);
    for (const d of sessionDirs) assertEquals(lastEvent(d), "session_end");
    // Each trace says why it ended: the lifeline closed, naming the formation and the member.
    f.line.members.forEach((m, i) => {
      const closed = Deno.readTextFileSync(`${sessionDirs[i]}/trace.jsonl`).trim().split("\n")
        .map((l) => JSON.parse(l)).filter((l) => l.event_type === "lifeline_closed");
      assertEquals(
        closed.map((l) => [l.formation_id, l.formation_member]),
        [[f.line.formation_id, m.name]],
      );
    });
    // The killed launcher left its formation record and folder: mur ps prunes both.
    const ps = await runMur(["ps"], { MURMUR_HOME: f.home });
    assertEquals(ps.code, 0);
    assert(
      ps.stderr.includes(
        `pruned: ${f.line.formation_id} — its launcher (pid ${f.proc.pid}) is gone`,
      ),
      ps.stderr,
    );
    assert(!(await Deno.stat(`${f.home}/formations/${f.line.formation_id}`).catch(() => null)));
  } finally {
    await f.close();
  }
});

Deno.test("formation: a member killed mid-run is logged, the formation goes on, and still ends together", async () => {
  const f = await launch(await writeFormation(NAMES, THREE));
  try {
    const byName = Object.fromEntries(f.line.members.map((m) => [m.name, m]));
    Deno.kill(byName.reviewer.pid!, "SIGKILL");
    const death =
      `[mur run] member 'reviewer' (pid ${byName.reviewer.pid}, ${byName.reviewer.session_id}) exited SIGKILL before the formation ended; the formation goes on without it, and calls to it fail`;
    // Before anything else: a SIGTERM that reaches the launcher before it has seen the death
    // would (rightly) stop the formation without this line.
    await until("the launcher logs the death", () => f.stderrSoFar().includes(death) || undefined);
    assert(!(await pidAlive(byName.reviewer.pid!)));
    // The formation goes on: the coder still answers its caller.
    const leadToCoder = crewOf(f, "lead").members.find((m) => m.name === "coder")!.token;
    const sent = await call(byName.coder.url, "SendMessage", message("still there?"), leadToCoder);
    assertEquals(sent.status, 200);
    assert(await pidAlive(f.proc.pid), "the launcher still runs");
    f.proc.kill("SIGTERM");
    assertEquals((await f.proc.status).code, 0);
    assert(await allGone(f.pids()));
    const err = await f.stderr;
    assert(err.includes(death), err);
  } finally {
    await f.close();
  }
});

Deno.test("formation: a roster fault starts nothing (E-ROS-008, exit 1); --manifest beside --roster is E-CLI-002", async () => {
  const dir = await writeFormation(
    ["a", "b"],
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}, {name: b, manifest: b}]\nreachability: [{from: b, to: [a]}]\n",
  );
  try {
    const env = { MURMUR_HOME: `${dir}/.home` };
    const r = await runMur(["run", "--roster", `${dir}/roster.yaml`], env);
    assertEquals(r.code, 1);
    assert(r.stderr.includes("error[E-ROS-008]"), r.stderr);
    assertEquals(r.stdout, "");
    assert(!(await Deno.stat(`${dir}/.home/running`).catch(() => null)), "no record written");
    const c = await runMur(["run", "--roster", `${dir}/roster.yaml`, "--manifest", "x"], env);
    assertEquals(c.code, 2);
    assert(c.stderr.includes("error[E-CLI-002]: mur run: --manifest does not go with --roster"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("formation: mur ps groups the members under their formation; mur stop <frm> stops them as one", async () => {
  const f = await launch(await writeFormation(NAMES, THREE));
  try {
    const env = { MURMUR_HOME: f.home };
    const id = f.line.formation_id;
    const ps = await runMur(["ps"], env);
    assertEquals(ps.code, 0);
    // Each member's door answers `mur ps` as its session (the card probe with its operator token).
    const table = ps.stdout.slice(0, ps.stdout.indexOf(`formation ${id}`));
    for (const m of f.line.members) {
      assert(new RegExp(`^@\\d+ +${m.session_id} .* idle `, "m").test(table), table);
    }
    const block = ps.stdout.slice(ps.stdout.indexOf(`formation ${id}`)).trim().split("\n");
    assertEquals(block, [
      `formation ${id}  launcher pid ${f.proc.pid}  entry lead`,
      ...f.line.members.map((m) => `  ${m.name.padEnd(8)}  ${m.session_id}  running`),
    ]);
    const bad = await runMur(["stop", "frm_nope"], env);
    assertEquals(bad.code, 1);
    assert(bad.stderr.includes("error[E-RUN-022]: 'frm_nope' is not a formation id"), bad.stderr);

    const stop = await runMur(["stop", id], env);
    assertEquals(stop.code, 0, stop.stderr);
    assertEquals(stop.stdout.trim().split("\n"), [
      `stopped:  ${id}`,
      `launcher: pid ${f.proc.pid}, SIGTERM`,
      ...f.line.members.map((m) =>
        `member:   ${m.name.padEnd(8)}  ${m.session_id}  session_end ok`
      ),
    ]);
    // The launcher ends as its entry did (stopped while it waited for a task: ok, exit 0), and
    // nothing says the entry waited its whole 120 s for a task.
    assertEquals((await f.proc.status).code, 0);
    assert(!(await f.stderr).includes("W-RUN-004"), await f.stderr);
    assert(await allGone(f.pids()));
    const after = await runMur(["ps"], env);
    assertEquals(after.stdout, "no running capsules\n");
    const again = await runMur(["stop", id], env);
    assert(
      again.stderr.includes(`error[E-RUN-022]: no formation ${id} is running on this machine`),
    );
  } finally {
    await f.close();
  }
});

Deno.test("formation: mur stop <frm> ends the launcher with the formation's status line and exit 0, as a capsule's stop does", async () => {
  const dir = await writeFormation(NAMES, THREE);
  const home = `${dir}/.home`;
  const launcher = await spawnMur(["run", "--roster", `${dir}/roster.yaml`], {
    MURMUR_HOME: home,
    NO_COLOR: "1",
  });
  try {
    let id: string | undefined;
    while (id === undefined) {
      const line = await launcher.nextLine(60_000);
      assert(line !== null, "the launcher ended before announcing its formation");
      id = /^formation: (frm_\w+)$/.exec(line)?.[1];
    }
    const stop = await runMur(["stop", id], { MURMUR_HOME: home });
    assertEquals(stop.code, 0, stop.stderr);
    const st = await launcher.child.status;
    assertEquals(st.code, 0);
    await launcher.out.done;
    assert(launcher.out.text().endsWith("\nstatus: ok\n"), launcher.out.text());
    await launcher.err.done;
    assert(!launcher.err.text().includes("W-RUN-004"), launcher.err.text());
  } finally {
    launcher.kill();
    await launcher.child.status.catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
