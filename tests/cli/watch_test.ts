/**
 * `mur watch` as a subprocess against a fake door that writes seed-000 bytes: exact stdout and
 * stderr, exit codes, line flushing through a pipe, and the session-address path.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  artifact,
  connectionFrame,
  responseArtifact,
  startFakeDoor,
  status,
  taskFrame,
} from "../watch/fake_door.ts";
import { murArgv, startProcess } from "../helpers/mur.ts";
import { fakeSessionId, runMur, spawnMur, tempHome, writeRecord } from "./helpers.ts";
import { shq } from "./pipes.ts";
import { murLine } from "../../src/invocation.ts";

const T1 = "tsk_0199c4e2f1b7712a9d3e4f5061728394";
const T2 = "tsk_0199c4e2f1b7712a9d3e4f5061728395";
const T3 = "tsk_0199c4e2f1b7712a9d3e4f5061728396";
const C1 = "ctx_0199c4e2f1b7712a9d3e4f50617283a1";

/** The end of E-IO-003's line: the command that watches the same target again (as printed). */
const reattach = (...target: string[]) =>
  ` — the capsule may still be running; run \`${murLine("watch", ...target)}\` again to reattach`;

Deno.test("mur watch prints text, a tool call, a failure, a rejection and a completion", async () => {
  const sid = fakeSessionId();
  const door = startFakeDoor({
    sessionId: sid,
    async watch(w) {
      await w.event(
        null,
        connectionFrame({
          frame: "connection-ack",
          role: "observer",
          conversationMode: "stateless",
        }),
      );
      await w.event(1, status(T1, C1, "TASK_STATE_WORKING", "inference turn 1"));
      await w.event(
        2,
        taskFrame(T1, C1, { frame: "thinking", text: "The user wants the weather.", final: false }),
      );
      await w.event(3, taskFrame(T1, C1, { frame: "text", text: "Let me check. ", final: false }));
      await w.event(
        4,
        taskFrame(T1, C1, { frame: "tool-call-started", toolCallId: "toolu_01", toolName: "bash" }),
      );
      await w.event(
        5,
        taskFrame(T1, C1, { frame: "tool-call-progress", toolCallId: "toolu_01", inputBytes: 20 }),
      );
      await w.event(6, taskFrame(T1, C1, { frame: "text", text: "", final: true }));
      await w.heartbeat();
      await w.event(
        7,
        taskFrame(
          T1,
          C1,
          artifact({
            toolName: "bash",
            content:
              "<untrusted-content source=tool:bash>\nExit code: 0\nStdout:\nhello\n\n</untrusted-content>",
            fenceSource: "tool:bash",
            toolCallId: "toolu_01",
            durationMs: 12,
            exitCode: 0,
          }),
        ),
      );
      await w.event(8, status(T1, C1, "TASK_STATE_WORKING", "inference turn 2"));
      await w.event(9, taskFrame(T1, C1, { frame: "text", text: "It is sunny ", final: false }));
      await w.event(10, taskFrame(T1, C1, { frame: "text", text: "in Paris.", final: false }));
      await w.event(11, taskFrame(T1, C1, { frame: "text", text: "", final: true }));
      await w.event(12, responseArtifact(T1, C1, "It is sunny in Paris."));
      await w.event(13, status(T1, C1, "TASK_STATE_COMPLETED", "task completed"));
      await w.event(14, status(T2, C1, "TASK_STATE_WORKING", "inference turn 1"));
      await w.event(
        15,
        taskFrame(
          T2,
          C1,
          artifact({
            toolName: "no-such-tool",
            content: "tool 'no-such-tool' is not declared in manifest allowlist",
            toolCallId: "toolu_03",
            isError: true,
            durationMs: 0,
          }),
        ),
      );
      await w.event(
        16,
        taskFrame(T2, C1, { frame: "quota", windows: [{ name: "five-hour", used: 0.4 }] }),
      );
      await w.event(
        17,
        status(T2, C1, "TASK_STATE_FAILED", "task failed (driver_error): provider overloaded"),
      );
      await w.event(
        18,
        status(
          T3,
          C1,
          "TASK_STATE_REJECTED",
          "task rejected: the session ended before this task started",
        ),
      );
      await w.event(null, connectionFrame({ frame: "capsule-closed" }));
    },
  });
  try {
    const r = await runMur(["watch", "--url", door.url]);
    assertEquals(
      r.stdout,
      [
        "[working] inference turn 1",
        "Let me check. ",
        "[artifact] tool: bash [ok, exit 0, 12ms] | Exit code: 0",
        "  Stdout:",
        "  hello",
        "[working] inference turn 2",
        "It is sunny in Paris.",
        "[completed]",
        "  It is sunny in Paris.",
        "[tsk 728395] [working] inference turn 1",
        "[artifact] tool: no-such-tool [error, 0ms] | tool 'no-such-tool' is not declared in manifest allowlist",
        "[tsk 728395] [failed]",
        "[tsk 728396] [rejected]",
        "",
      ].join("\n"),
    );
    // Why a task failed or was rejected is on stderr; stdout keeps the `[<state>]` alone.
    assertEquals(
      r.stderr,
      [
        `[murmur] watching ${sid} at ${door.url}`,
        "[murmur] tsk 728395 failed: task failed (driver_error): provider overloaded",
        "[murmur] tsk 728396 rejected: task rejected: the session ended before this task started",
        "[murmur] capsule closed",
        "",
      ].join("\n"),
    );
    assertEquals(r.code, 0);
    // what the watch sent
    const req = door.requests.find((q) => q.method === "murmur.WatchSession")!;
    assertEquals(req.headers.get("a2a-version"), "1.0");
    assertEquals(req.headers.get("last-event-id"), "0");
    assert(req.headers.get("content-type")!.startsWith("application/json"));
    assertEquals(req.headers.get("authorization"), null);
  } finally {
    await door.close();
  }
});

Deno.test("a connection lost after an event: exit 1 and E-IO-003 naming the last id", async () => {
  const sid = fakeSessionId();
  const door = startFakeDoor({
    sessionId: sid,
    async watch(w) {
      await w.event(
        null,
        connectionFrame({
          frame: "connection-ack",
          role: "observer",
          conversationMode: "stateless",
        }),
      );
      await w.event(41, status(T1, C1, "TASK_STATE_WORKING", "inference turn 1"));
      await w.event(42, taskFrame(T1, C1, { frame: "text", text: "half a line", final: false }));
      // the stream ends without capsule-closed
    },
  });
  try {
    const r = await runMur(["watch", "--url", door.url]);
    assertEquals(r.code, 1);
    assertEquals(r.stdout, "[working] inference turn 1\nhalf a line\n");
    const lines = r.stderr.trimEnd().split("\n");
    assertEquals(
      lines.at(-2),
      `error[E-IO-003]: connection to ${door.url} lost after event id 42${
        reattach("--url", door.url)
      }`,
    );
    // A fresh look: the door still answers, so the capsule may still be running.
    assertEquals(lines.at(-1), `[murmur] its door still answers at ${door.url}`);
  } finally {
    await door.close();
  }
});

Deno.test("a connection lost before any event: exit 1 and 'lost before any event'", async () => {
  const sid = fakeSessionId();
  const door = startFakeDoor({
    sessionId: sid,
    async watch(w) {
      await w.event(
        null,
        connectionFrame({
          frame: "connection-ack",
          role: "observer",
          conversationMode: "stateless",
        }),
      );
      await w.heartbeat();
    },
  });
  try {
    const r = await runMur(["watch", "--url", door.url]);
    assertEquals(r.code, 1);
    assertEquals(r.stdout, "");
    assertEquals(
      r.stderr.trimEnd().split("\n").slice(-2),
      [
        `error[E-IO-003]: connection to ${door.url} lost before any event${
          reattach("--url", door.url)
        }`,
        `[murmur] its door still answers at ${door.url}`,
      ],
    );
  } finally {
    await door.close();
  }
});

Deno.test("mur watch | reader sees a status line while the stream is still open, uncoloured", async () => {
  const sid = fakeSessionId();
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const door = startFakeDoor({
    sessionId: sid,
    async watch(w) {
      await w.event(
        null,
        connectionFrame({
          frame: "connection-ack",
          role: "observer",
          conversationMode: "stateless",
        }),
      );
      await w.event(1, status(T1, C1, "TASK_STATE_WORKING", "inference turn 1"));
      await w.event(2, taskFrame(T1, C1, { frame: "text", text: "streaming", final: false }));
      // hold the stream open until the test has read the line (bounded, should the test fail)
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([released, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
      clearTimeout(timer);
      await w.event(3, status(T1, C1, "TASK_STATE_COMPLETED", "task completed"));
      await w.event(null, connectionFrame({ frame: "capsule-closed" }));
    },
  });
  // NO_COLOR deliberately unset: a pipe alone must be enough to turn colour off.
  const live = await spawnMur(["watch", "--url", door.url], { TERM: "xterm-256color" });
  try {
    const first = await live.nextLine(15_000);
    assertEquals(first, "[working] inference turn 1");
    assert(!first!.includes("\x1b"));
    // The door holds the stream open until released: the lines after the release prove the
    // watch was still running and reading when the first line came out.
    release();
    assertEquals(await live.nextLine(), "streaming");
    assertEquals(await live.nextLine(), "[completed]");
    assertEquals(await live.nextLine(), null);
    const st = await live.child.status;
    assertEquals(st.code, 0);
    assert((await live.err.rest()).includes("[murmur] capsule closed"));
  } finally {
    release();
    live.kill();
    await live.child.status.catch(() => {});
    await door.close();
  }
});

Deno.test("mur watch --json writes one line per event with its id", async () => {
  const sid = fakeSessionId();
  const events: [number | null, unknown][] = [
    [
      null,
      connectionFrame({ frame: "connection-ack", role: "observer", conversationMode: "threaded" }),
    ],
    [1, status(T1, C1, "TASK_STATE_WORKING", "inference turn 1")],
    [2, taskFrame(T1, C1, { frame: "thinking", text: "x", final: false })],
    [3, status(T1, C1, "TASK_STATE_COMPLETED", "task completed")],
    [null, connectionFrame({ frame: "capsule-closed" })],
  ];
  const door = startFakeDoor({
    sessionId: sid,
    async watch(w) {
      for (const [id, ev] of events) await w.event(id, ev);
    },
  });
  try {
    const r = await runMur(["watch", "--url", door.url, "--json"]);
    assertEquals(r.code, 0);
    const lines = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assertEquals(lines, events.map(([id, event]) => ({ id, event })));
    assert(r.stderr.endsWith("[murmur] capsule closed\n"));
  } finally {
    await door.close();
  }
});

Deno.test("gap and lagged warnings on stderr name firstAvailableId and missed", async () => {
  const sid = fakeSessionId();
  const door = startFakeDoor({
    sessionId: sid,
    async watch(w) {
      await w.event(
        null,
        connectionFrame({
          frame: "connection-ack",
          role: "observer",
          conversationMode: "stateless",
        }),
      );
      await w.event(null, connectionFrame({ frame: "gap", firstAvailableId: 37 }));
      await w.event(37, status(T1, C1, "TASK_STATE_WORKING", "inference turn 9"));
      await w.event(null, connectionFrame({ frame: "lagged", missed: 40 }));
      await w.event(78, status(T1, C1, "TASK_STATE_CANCELED", "task canceled"));
      await w.event(null, connectionFrame({ frame: "capsule-closed" }));
    },
  });
  try {
    const r = await runMur(["watch", "--url", door.url]);
    assertEquals(r.code, 0);
    assertEquals(r.stdout, "[working] inference turn 9\n[canceled]\n");
    const err = r.stderr.split("\n");
    assert(
      err.some((l) => l.startsWith("[murmur] warning: gap:") && l.includes("firstAvailableId 37")),
      r.stderr,
    );
    assert(
      err.some((l) => l.startsWith("[murmur] warning: lagged:") && l.includes("missed 40")),
      r.stderr,
    );
  } finally {
    await door.close();
  }
});

Deno.test("an authenticated door: 401 names the status and MURMUR_DOOR_TOKEN; the token opens it", async () => {
  const sid = fakeSessionId();
  const token = "mdt1.test-token";
  const door = startFakeDoor({
    sessionId: sid,
    token,
    async watch(w) {
      await w.event(null, connectionFrame({ frame: "capsule-closed" }));
    },
  });
  try {
    const refused = await runMur(["watch", "--url", door.url]);
    assertEquals(refused.code, 1);
    // A refusal is not a lost connection: E-IO-004, not E-IO-003.
    assert(refused.stderr.includes("error[E-IO-004]:"), refused.stderr);
    assert(refused.stderr.includes("HTTP 401"), refused.stderr);
    assert(refused.stderr.includes("MURMUR_DOOR_TOKEN"), refused.stderr);

    const ok = await runMur(["watch", "--url", door.url], { MURMUR_DOOR_TOKEN: token });
    assertEquals(ok.code, 0);
    // the extended card named the session
    assertEquals(ok.stderr, `[murmur] watching ${sid} at ${door.url}\n[murmur] capsule closed\n`);
    const req = door.requests.filter((q) => q.method === "murmur.WatchSession").at(-1)!;
    assertEquals(req.headers.get("authorization"), `Bearer ${token}`);
  } finally {
    await door.close();
  }
});

Deno.test("mur watch SESSION resolves the record, presents its operator token, names the session", async () => {
  const home = await tempHome();
  const sid = fakeSessionId();
  const token = "mdt1.operator";
  const door = startFakeDoor({
    sessionId: sid,
    token,
    async watch(w) {
      await w.event(
        null,
        connectionFrame({
          frame: "connection-ack",
          role: "observer",
          conversationMode: "stateless",
        }),
      );
      await w.event(5, status(T1, C1, "TASK_STATE_WORKING", "inference turn 1"));
    },
  });
  try {
    await writeRecord(home, { session_id: sid, url: door.url, tokens: { operator: token } });
    const r = await runMur(["watch", sid.slice(-6)], { MURMUR_HOME: home });
    assertEquals(r.code, 1);
    assertEquals(r.stdout, "[working] inference turn 1\n");
    assertEquals(
      r.stderr,
      [
        `[murmur] watching ${sid} (fake@0.0.1) at ${door.url}`,
        `error[E-IO-003]: connection to ${sid} lost after event id 5${reattach(sid)}`,
        // The record's process (this test's) is alive and its trace has no session_end.
        "[murmur] its running record is still there and its process is alive",
        "",
      ].join("\n"),
    );
  } finally {
    await door.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("mur watch --url on a port nothing listens on: E-IO-003, exit 1", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const r = await runMur(["watch", "--url", `127.0.0.1:${port}`]);
  assertEquals(r.code, 1);
  assert(r.stderr.startsWith(`error[E-IO-003]: could not connect to 127.0.0.1:${port}`), r.stderr);
});

Deno.test("mur watch | head -1: a reader that goes away ends the watch quietly", async () => {
  const sid = fakeSessionId();
  const door = startFakeDoor({
    sessionId: sid,
    async watch(w) {
      await w.event(1, status(T1, C1, "TASK_STATE_WORKING", "inference turn 1"));
      // keep writing lines after the reader has gone (bounded)
      for (let i = 2; i < 200; i++) {
        await w.event(i, status(T1, C1, "TASK_STATE_WORKING", `inference turn ${i}`));
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  });
  const line = `${murArgv(["watch", "--url", door.url]).map(shq).join(" ")} | head -1`;
  const pipeline = startProcess(["sh", "-c", line], { setsid: true });
  try {
    const out = await pipeline.end(30_000);
    assertEquals(out.stdout, "[working] inference turn 1\n");
    assert(!out.stderr.includes("E-IO-003"));
  } finally {
    await pipeline.close();
    await door.close();
  }
});
