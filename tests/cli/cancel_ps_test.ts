/** `mur cancel` and `mur ps` as subprocesses against fake doors and real running records. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { formatUptime } from "../../src/cli/ps.ts";
import { listRunningRecords } from "../../src/home/running_records.ts";
import { startFakeDoor } from "../watch/fake_door.ts";
import { fakeSessionId, runMur, tempHome, writeRecord } from "./helpers.ts";

const T1 = "tsk_0199c4e2f1b7712a9d3e4f5061728394";
const T2 = "tsk_0199c4e2f1b7712a9d3e4f5061728395";

function cancelDoor(sid: string, token?: string) {
  return startFakeDoor({
    sessionId: sid,
    token,
    rpc(method, params) {
      if (method !== "CancelTask") return { error: { code: -32601, message: "Method not found" } };
      const id = (params as { id?: string }).id;
      if (id === T1) {
        return {
          result: {
            id: T1,
            contextId: "ctx_1",
            status: { state: "TASK_STATE_CANCELED", timestamp: "2026-10-13T09:00:00.123Z" },
            artifacts: [{
              artifactId: "residue",
              name: "residue",
              parts: [{
                mediaType: "application/json",
                data: {
                  kind: "detached_shell",
                  work_id: "wrk_01",
                  binary: "sleep",
                  command: "sleep 30",
                  started_at_ms: 1,
                },
              }, {
                mediaType: "application/json",
                data: {
                  kind: "delegation",
                  delegation_id: "dlg_01",
                  capsule: "worker",
                  version: "0.1.0",
                },
              }],
            }],
          },
        };
      }
      if (id === T2) {
        return {
          error: {
            code: -32002,
            message: "Task cannot be canceled: it is already TASK_STATE_COMPLETED",
            data: [{
              "@type": "type.googleapis.com/google.rpc.ErrorInfo",
              reason: "TASK_NOT_CANCELABLE",
              domain: "a2a-protocol.org",
              metadata: { taskId: T2, state: "TASK_STATE_COMPLETED" },
            }],
          },
        };
      }
      return { error: { code: -32001, message: "Task not found" } };
    },
  });
}

Deno.test("mur cancel SESSION TASK_ID: state and what keeps running; ended and unknown tasks", async () => {
  const home = await tempHome();
  const sid = fakeSessionId();
  const door = cancelDoor(sid);
  try {
    await writeRecord(home, { session_id: sid, url: door.url });
    const r = await runMur(["cancel", "@1", T1], { MURMUR_HOME: home });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(
      r.stdout,
      [
        `task:    ${T1}`,
        "state:   canceled",
        "running: wrk_01  detached shell  sleep 30",
        "running: dlg_01  delegation  worker@0.1.0",
        "",
      ].join("\n"),
    );
    // A task that has ended cannot be canceled: the door's refusal, exit 1, nothing changed.
    const done = await runMur(["cancel", sid, T2], { MURMUR_HOME: home });
    assertEquals(done.code, 1);
    assertEquals(done.stdout, "");
    assert(
      done.stderr.startsWith(
        `error[E-RUN-049]: ${sid} refused to cancel ${T2} (it ended completed): -32002 Task cannot be canceled`,
      ),
      done.stderr,
    );
    const unknown = await runMur(
      ["cancel", sid, "tsk_0199c4e2f1b7712a9d3e4f50617283ff"],
      { MURMUR_HOME: home },
    );
    assertEquals(unknown.code, 1);
    assert(
      unknown.stderr.startsWith(
        `error[E-RUN-048]: ${sid} holds no task tsk_0199c4e2f1b7712a9d3e4f50617283ff`,
      ),
      unknown.stderr,
    );
    // The hint says where task ids are shown, and it is true (tests/cli/watch_real_test.ts).
    assert(unknown.stderr.includes("watch` names each status line's task"), unknown.stderr);
    const req = door.requests.find((q) => q.method === "CancelTask")!;
    assertEquals((req.body as { params: unknown }).params, { id: T1 });
    assertEquals(req.headers.get("a2a-version"), "1.0");
  } finally {
    await door.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("mur cancel --url presents MURMUR_DOOR_TOKEN; without it the 401 is E-IO-004", async () => {
  const sid = fakeSessionId();
  const door = cancelDoor(sid, "mdt1.tok");
  try {
    const refused = await runMur(["cancel", "--url", door.url, T1]);
    assertEquals(refused.code, 1);
    assert(refused.stderr.startsWith("error[E-IO-004]: "), refused.stderr);
    assert(
      refused.stderr.includes("HTTP 401") && refused.stderr.includes("MURMUR_DOOR_TOKEN"),
      refused.stderr,
    );
    const ok = await runMur(["cancel", "--url", door.url, T1], { MURMUR_DOOR_TOKEN: "mdt1.tok" });
    assertEquals(ok.code, 0, ok.stderr);
    assert(ok.stdout.startsWith(`task:    ${T1}\nstate:   canceled\n`));
  } finally {
    await door.close();
  }
});

Deno.test("mur ps: rows newest first, unreachable doors, pruned records, empty", async () => {
  const home = await tempHome();
  const older = fakeSessionId(Date.now() - 60_000);
  const newer = fakeSessionId();
  const door = startFakeDoor({ sessionId: newer });
  try {
    const empty = await runMur(["ps"], { MURMUR_HOME: home });
    assertEquals(empty.code, 0);
    assertEquals(empty.stdout, "no running capsules\n");

    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const closedPort = (l.addr as Deno.NetAddr).port;
    l.close();
    await writeRecord(home, {
      session_id: older,
      url: `localhost:${closedPort}`,
      capsule_name: "old",
      started_at: new Date(Date.now() - 90_061_000).toISOString(),
    });
    await writeRecord(home, {
      session_id: newer,
      url: door.url,
      capsule_name: "hello",
      capsule_version: "0.1.0",
    });
    const gone = new Deno.Command(Deno.execPath(), { args: ["eval", ""] }).spawn();
    await gone.status;
    const stale = fakeSessionId();
    await writeRecord(home, { session_id: stale, url: door.url, pid: gone.pid });

    const r = await runMur(["ps"], { MURMUR_HOME: home });
    assertEquals(r.code, 0);
    assertEquals(r.stderr, `pruned: ${stale} — no process holds pid ${gone.pid}\n`);
    const lines = r.stdout.trimEnd().split("\n");
    assertEquals(lines.length, 3);
    assertEquals(
      lines[0],
      "@N".padEnd(4) + "  " + "SESSION".padEnd(36) + "  " + "CAPSULE".padEnd(24) + "  " +
        "STATUS".padEnd(12) + "  " +
        "UPTIME".padEnd(9) + "  " + "URL".padEnd(21) + "  PAGE",
    );
    const cells = (line: string) => line.split(/\s{2,}/);
    const [n1, s1, c1, st1, up1, u1, p1] = cells(lines[1]);
    // The fake door answers no ListTasks, so what the session is doing is not known: `running`.
    assertEquals([n1, s1, c1, st1, u1, p1], [
      "@1",
      newer,
      "hello@0.1.0",
      "running",
      door.url,
      `http://${door.url}/ui`,
    ]);
    assert(/^00:00:\d\d$/.test(up1), up1);
    const row2 = lines[2];
    assert(row2.startsWith(`@2    ${older}`), row2);
    assert(
      row2.includes("old@0.0.1") && row2.includes("unreachable") && row2.includes("1d 01:01:0"),
      row2,
    );
    assertEquals((await listRunningRecords(home)).length, 2);
  } finally {
    await door.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("uptime: HH:MM:SS, with days past one", () => {
  assertEquals(formatUptime(0), "00:00:00");
  assertEquals(formatUptime(3_723_000), "01:02:03");
  assertEquals(formatUptime(2 * 86_400_000 + 5_000), "2d 00:00:05");
});
