/**
 * A realistic session, soaked (issue 13): a capsule on the scripted driver runs 10 tasks of 22
 * turns each (220 turns) whose tool calls are the ordinary ones an agent makes — file reads of
 * 0–64 KiB (the `cat` shell tool), a command tool printing multi-byte text, one returning an
 * image, one printing 40 KiB (truncated to 16 KiB), a detached shell whose completion comes back
 * as a task — with 0–4 KiB thinking and text between them. The whole time it is followed by a
 * raw `murmur.WatchSession` reader, an activated `SubscribeToTask` per task (from Last-Event-ID
 * 0) and the real `mur watch` in a pipe.
 *
 * Every reader gets every event: the watch ids 1…N with no hole and no `lagged`; each task
 * stream's events are the watch's events of that task, byte for byte; the tool calls, turns and
 * tasks are the trace's; `mur watch` prints every artifact and reports the last id. The capsule
 * ends `status: ok`, stderr holds no uncaught error or connection fault, and RSS stays under the
 * bound below.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { userMessage } from "../helpers/capsule.ts";
import { STREAM_URI } from "../helpers/sse.ts";
import { RawStream } from "../helpers/raw_stream.ts";
import { until } from "../helpers/until.ts";
import { type Mur, runMur, startMur as startCli } from "../helpers/mur.ts";
import { startMur } from "./helpers/mur.ts";
import { int, prng, report, suiteSeed } from "./helpers/rand.ts";

const TASKS = 10;
const TOOL_TURNS = 21; // and one closing text turn: 22 turns a task
/** RSS bound for `mur run` over the whole soak (a baseline capsule sits near 100 MiB). */
const RSS_BOUND_MIB = 256;

const enc = new TextEncoder();

// A 1×1 PNG: the image tool's attachment.
const PNG_B64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** Text of exactly `bytes` UTF-8 bytes (or one less), mixing ASCII lines and 2–4 byte characters. */
function textOf(bytes: number, salt: number): string {
  const units = ["line ", String(salt), " é", " €", " 日本", " 😀", "\n", "\t", '"q"', "\\"];
  let s = "";
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const u = units[(i * 7 + salt) % units.length];
    const b = enc.encode(u).length;
    if (n + b > bytes) break;
    s += u;
    n += b;
  }
  return s;
}

async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function vmRssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) / 1024 : 0;
}

interface Ev {
  id: number | null;
  /** The `data:` line's JSON-RPC `result`, as the bytes' text. */
  result: string;
  obj: Record<string, Record<string, unknown>>;
}

/** Splits a body into events, keeping each `result` as the exact text it was sent as. */
function events(text: string, requestId: string): Ev[] {
  const head = `data: {"jsonrpc":"2.0","id":${JSON.stringify(requestId)},"result":`;
  const out: Ev[] = [];
  const blocks = text.split("\n\n");
  blocks.pop(); // what follows the last whole event
  for (const block of blocks) {
    if (block.startsWith(":")) continue;
    const lines = block.split("\n");
    const id = lines[0].startsWith("id: ") ? Number(lines[0].slice(4)) : null;
    const data = lines[id === null ? 0 : 1];
    assert.ok(data.startsWith(head) && data.endsWith("}"), `an event of ${requestId}: ${block}`);
    const result = data.slice(head.length, -1);
    out.push({ id, result, obj: JSON.parse(result) });
  }
  return out;
}

type Frame = Record<string, unknown>;
function frameOf(e: Ev): Frame | undefined {
  const carrier = e.obj.statusUpdate ?? e.obj.message;
  return (carrier?.metadata as Record<string, Frame> | undefined)?.[STREAM_URI];
}
function taskOf(e: Ev): string | undefined {
  return (e.obj.statusUpdate?.taskId ?? e.obj.artifactUpdate?.taskId) as string | undefined;
}

Deno.test("soak: 220 turns of real tools, every reader gets every event byte for byte", async () => {
  const seed = suiteSeed("soak");
  const r = prng(seed);
  // Not under /tmp: the tools run under the default scoped containment, where /tmp is each
  // process's own (docs/containment.md); the rest of the host is theirs to read.
  const cache = new URL("../../.cache", import.meta.url).pathname;
  await Deno.mkdir(cache, { recursive: true });
  const data = await Deno.makeTempDir({ dir: cache, prefix: "mur-soak-data-" });
  // Files the model reads: the edges of the wire's blocks, the 16 KiB truncation, up to 64 KiB.
  const sizes = [0, 1, 1023, 1024, 4096, 7000, 16383, 16384, 16385, 40960, 65536];
  const files: { path: string; text: string }[] = [];
  for (let k = 0; k < 24; k++) {
    const size = k < sizes.length ? sizes[k] : int(r, 0, 64 * 1024);
    const path = `${data}/f_${k}.txt`;
    const text = textOf(size, k);
    await Deno.writeTextFile(path, text);
    files.push({ path, text });
  }
  const utf8 = textOf(6000, 3);
  await Deno.writeTextFile(`${data}/utf8.txt`, utf8);
  await Deno.writeTextFile(`${data}/big.txt`, textOf(40 * 1024, 5));
  await Deno.writeTextFile(
    `${data}/image.json`,
    JSON.stringify({
      content: [
        { type: "text", text: "a chart of the results" },
        { type: "image", data: PNG_B64, mimeType: "image/png" },
      ],
    }),
  );

  // The script: task k's turns call the tools in turn; the detached shell once, in task 0.
  const expectRead = new Map<string, { text: string }>();
  const tasks = [];
  for (let k = 0; k < TASKS; k++) {
    const turns = [];
    for (let t = 0; t < TOOL_TURNS; t++) {
      const id = `toolu_${k}_${t}`;
      const kind = k === 0 && t === 3 ? "detach" : ["read", "read", "utf8", "image", "big"][t % 5];
      let call: Record<string, unknown>;
      if (kind === "read") {
        const f = files[(k * TOOL_TURNS + t) % files.length];
        expectRead.set(id, f);
        call = { id, name: "cat", input: { command: f.path } };
      } else if (kind === "detach") {
        call = { id, name: "bash", input: { command: "sleep 2; echo detached done" } };
      } else call = { id, name: kind, input: {} };
      turns.push({
        steps: [
          { thinking: textOf(int(r, 0, 4096), t) },
          { text: textOf(int(r, 0, 2048), k) },
          { tool_call: call },
        ],
      });
    }
    turns.push({ steps: [{ text: `task ${k} done ${textOf(int(r, 0, 4096), k + 1)}` }] });
    tasks.push({ match: `^soak task ${k}$`, turns });
  }
  // The detached shell's completion task, and anything else: one short answer.
  tasks.push({ turns: [{ steps: [{ text: "noted: the command finished" }] }] });

  const script = `#!/bin/sh\nexec cat "${data}/$1"\n`;
  const mur = await startMur({
    manifest: {
      name: "soak",
      version: "0.1.0",
      inference: { max_turns: 40 },
      lifecycle: {
        task_acceptance: "queue",
        after_task: "sleep",
        queue_depth: 4,
        shell_grace_secs: 1,
      },
      capabilities: { shell: { allow: ["cat", "bash"] } },
      tools: [
        { name: "utf8", description: "multi-byte text", command: ["./show.sh", "utf8.txt"] },
        { name: "image", description: "an image", command: ["./show.sh", "image.json"] },
        { name: "big", description: "40 KiB", command: ["./show.sh", "big.txt"] },
      ].map((t) => ({ ...t, input_schema: { type: "object" } })),
    },
    script: { tasks },
    files: { "show.sh": script },
  });
  const started = performance.now();
  let watch: RawStream<null> | null = null;
  let murWatch: Mur | null = null;
  const subs: RawStream<string>[] = [];
  try {
    const pid = mur.pid;
    let rssMax = vmRssMiB(pid);
    watch = await RawStream.open(base(mur), null, {
      id: "soak-watch",
      method: "murmur.WatchSession",
    }, { "Last-Event-ID": "0" });
    murWatch = await startCli({
      args: ["watch", "--url", new URL(mur.base).host],
      env: { MURMUR_HOME: mur.home, NO_COLOR: "1" },
    });
    // It runs until the capsule stops (the finally below kills it if the test fails first).
    const watching = murWatch;
    const murWatchOut = watching.status.then(() => watching.end(15_000));
    murWatchOut.catch(() => {}); // awaited after the stop; a failure before that is the test's
    await until("both watchers subscribed", () => mur.subscriptions() >= 2 || undefined);

    const taskIds: string[] = [];
    for (let k = 0; k < TASKS; k++) {
      const sent = await mur.rpc("SendMessage", {
        ...userMessage(`soak task ${k}`),
        configuration: { returnImmediately: true },
      });
      const id = (sent.result as { task: { id: string } }).task.id;
      taskIds.push(id);
      const sub = await RawStream.open(base(mur), id, {
        id: `sub-${k}`,
        method: "SubscribeToTask",
        params: { id },
      }, { "A2A-Extensions": STREAM_URI, "Last-Event-ID": "0" });
      subs.push(sub);
      // A task stream ends after its task's terminal status: the task is over.
      await sub.done;
      rssMax = Math.max(rssMax, vmRssMiB(pid));
    }
    // The detached shell's completion task runs too; then the session is stopped.
    await until("the completion task ended", async () => {
      const list = await mur.rpc("ListTasks", {});
      const ts = (list.result as { tasks: { id: string; status: { state: string } }[] }).tasks;
      const done = ts.filter((t) => t.status.state === "TASK_STATE_COMPLETED");
      return done.length === TASKS + 1 ? ts : undefined;
    }, 30_000);
    rssMax = Math.max(rssMax, vmRssMiB(pid));
    const lastId = await until("the watch has every event", () => {
      if (watch!.ended) {
        const faults = mur.stderrLines.filter((l) => !l.startsWith("debug:")).join("\n");
        throw new Error(`the watch stream ended while the session ran:\n${faults}`);
      }
      const evs = events(watch!.text, "soak-watch");
      const last = evs.filter((e) => e.id !== null).at(-1);
      const ended = evs.filter((e) =>
        (e.obj.statusUpdate?.status as { state?: string } | undefined)?.state ===
          "TASK_STATE_COMPLETED"
      );
      return ended.length === TASKS + 1 ? last?.id ?? undefined : undefined;
    });
    // `mur stop`, as a user ends a sleeping capsule: StopSession, then SIGTERM.
    const stop = await runMur({
      args: ["stop", mur.ready.session_id],
      env: { MURMUR_HOME: mur.home, NO_COLOR: "1" },
    });
    assert.equal(stop.code, 0, stop.stderr);
    const status = await mur.status;
    const { stdout: wOut, stderr: wErr, ...wStatus } = await murWatchOut;
    await watch.done;
    const seconds = (performance.now() - started) / 1000;

    // --- the capsule ended well -------------------------------------------------------------------
    assert.equal(status.code, 0, mur.stderrLines.join("\n"));
    const bad = mur.stderrLines.filter((l) =>
      /uncaught|E-RUN-050|fault|RangeError|TypeError|lagged/i.test(l)
    );
    assertEquals(bad, [], "stderr holds no uncaught error, fault or lag");
    assert.ok(rssMax < RSS_BOUND_MIB, `RSS peaked at ${rssMax.toFixed(0)} MiB`);

    // --- the raw watch: every id, no loss -------------------------------------------------------
    const w = events(watch.text, "soak-watch");
    const numbered = w.filter((e) => e.id !== null);
    assertEquals(numbered.map((e) => e.id), Array.from({ length: lastId }, (_, i) => i + 1));
    assert.ok(!w.some((e) => frameOf(e)?.frame === "lagged" || frameOf(e)?.frame === "gap"));
    const byId = new Map(numbered.map((e) => [e.id!, e]));
    const bytes = enc.encode(watch.text).length;

    // --- each task stream: exactly the watch's events of its task, byte for byte ----------------
    subs.forEach((sub, k) => {
      const got = events(sub.text, `sub-${k}`);
      assert.ok("task" in got[0].obj, "a task stream opens with the task");
      const mine = got.filter((e) => e.id !== null);
      const want = numbered.filter((e) => taskOf(e) === sub.c);
      assertEquals(mine.map((e) => e.id), want.map((e) => e.id), `task ${k}'s ids`);
      for (const e of mine) assert.equal(e.result, byId.get(e.id!)!.result, `event ${e.id}`);
      // Last-Event-ID 0 once the buffer has dropped event 1 also opens with a `gap` (seed 000
      // "Replay"); the task's own events after it are all still buffered.
      const extra = got.filter((e) => e.id === null).slice(1).map((e) => frameOf(e)?.frame);
      assert.ok(extra.length === 0 || (extra.length === 1 && extra[0] === "gap"), `${extra}`);
    });

    // --- the trace: tool calls, turns, tasks ------------------------------------------------------
    const ready = mur.ready as unknown as { session_dir: string };
    const trace = (await Deno.readTextFile(`${ready.session_dir}/trace.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    // `mur run --json` prints no status line: the trace's session_end holds the status.
    const end = trace.filter((l) => l.event_type === "session_end");
    assertEquals(end.map((l) => l.exit_status), ["ok"], "the capsule ends status: ok");
    const artifacts = new Map<string, Frame>();
    for (const e of numbered) {
      const f = frameOf(e);
      if (f?.frame === "artifact") artifacts.set(f.toolCallId as string, f);
    }
    const calls = trace.filter((l) => l.event_type === "tool_call");
    assertEquals(calls.length, TASKS * TOOL_TURNS);
    assertEquals(artifacts.size, calls.length);
    let toolBytes = 0;
    for (const c of calls) {
      const a = artifacts.get(c.tool_call_id)!;
      assert.ok(a, `an artifact for ${c.tool_call_id}`);
      assert.equal(a.toolName, c.tool_name);
      assert.equal(enc.encode(a.content as string).length, c.output_bytes, c.tool_call_id);
      assert.equal(a.durationMs, c.duration_ms);
      assert.equal(a.isError, c.status === "error");
      toolBytes += c.output_bytes;
    }
    const turnStatuses = numbered.filter((e) => {
      const m = (e.obj.statusUpdate?.status as { message?: { parts: { text: string }[] } })
        ?.message;
      return /^inference turn \d+$/.test(m?.parts[0].text ?? "");
    });
    const inferences = trace.filter((l) => l.event_type === "inference");
    assertEquals(turnStatuses.length, inferences.length);
    assert.ok(inferences.length >= 200, `${inferences.length} turns`);
    assertEquals(
      trace.filter((l) => l.event_type === "task_start").length,
      TASKS + 1,
      "the tasks and the detached shell's completion",
    );

    // --- what the tools returned is what the readers got -------------------------------------------
    for (const [id, f] of expectRead) {
      const a = artifacts.get(id)!;
      const content = a.content as string;
      if (a.truncated) assert.ok(content.includes(f.text.slice(0, 1000)), id);
      else assert.ok(content.includes(f.text), `${id}: the whole file`);
      const size = enc.encode(f.text).length;
      if (size > 16 * 1024) assert.equal(a.truncated, true, `${id}: ${size} bytes`);
      if (size < 15 * 1024) assert.equal(a.truncated, false, `${id}: ${size} bytes`);
    }
    const kinds = [...artifacts.values()];
    for (const a of kinds.filter((a) => a.toolName === "utf8")) {
      // A command tool's output reaches the model fenced (docs/protocol.md "Frames").
      const content = a.content as string;
      assert.ok(content.startsWith(`<untrusted-content source=${a.fenceSource}>\n`), content);
      assert.ok(content.includes(utf8), "the multi-byte text, whole");
    }
    assert.ok(kinds.filter((a) => a.toolName === "big").every((a) => a.truncated === true));
    const png = Uint8Array.from(atob(PNG_B64), (c) => c.charCodeAt(0));
    const sha = await sha256Hex(png);
    for (const a of kinds.filter((a) => a.toolName === "image")) {
      const att = a.attachments as { mediaType: string; sha256: string; url: string }[];
      assertEquals(att.map((x) => [x.mediaType, x.sha256]), [["image/png", sha]]);
    }
    const detached = artifacts.get("toolu_0_3")!;
    assert.match(detached.content as string, /wrk_/, "the shell moved to the background");

    // --- mur watch in a pipe: every artifact printed, the last id reported ----------------------
    assertEquals(
      [...wOut.matchAll(/\[artifact\] tool: (\S+)/g)].length,
      artifacts.size,
      "mur watch prints every artifact",
    );
    assert.ok([...wOut.matchAll(/\[completed\]/g)].length >= TASKS + 1, wOut.slice(-2000));
    // The capsule process exits without a closing frame: mur watch reads a lost connection after
    // the last event (docs/watch.md "`mur watch` in pipes"), exit 1 with E-IO-003.
    assert.match(wErr, new RegExp(`lost after event id ${lastId}\\b`), wErr);
    assert.equal(wStatus.code, 1);

    report("soak: turns", inferences.length);
    report("soak: tool calls", calls.length);
    report("soak: tool output bytes", toolBytes);
    report("soak: events", lastId);
    report("soak: watch bytes", bytes);
    report("soak: RSS peak MiB", `${rssMax.toFixed(0)} (bound ${RSS_BOUND_MIB})`);
    report("soak: seconds", seconds.toFixed(1));
  } finally {
    watch?.close();
    for (const s of subs) s.close();
    await murWatch?.close();
    await mur.close();
    await Deno.remove(data, { recursive: true }).catch(() => {});
  }
});

function base(mur: { base: string }): string {
  return mur.base;
}
