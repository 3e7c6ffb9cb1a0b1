/**
 * Security (issue 10): door tokens never reach the trace, the logs, error messages or the
 * environment and argv (`ps`) of child processes; attachment paths cannot escape their task; a
 * non-loopback bind without authentication warns W-SEC-032; the header and body caps hold.
 */
import assert from "node:assert/strict";
import { runMur } from "../helpers/mur.ts";
import { buildRequest, header, latin1, rawHttp } from "./helpers/http.ts";
import { type Mur, startMur } from "./helpers/mur.ts";
import { report } from "./helpers/rand.ts";

const FOREIGN = "mdt1.eyJjcmVkZW50aWFsIjoib3BlcmF0b3IifQ.Zm9yZWlnbi10b2tlbi1zZWNyZXQ";
const AUTH = {
  scheme: "bearer",
  credentials: {
    watcher: { scopes: ["GetTask", "ListTasks", "murmur.WatchSession"] },
    lister: { scopes: ["ListTasks"] },
  },
};
const DUMP = 'tr "\\0" "\\n" < /proc/self/environ > "$1.env"; ps -eww -o args > "$1.ps"';

async function allText(dir: string): Promise<string> {
  let out = "";
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out += await allText(p);
    else if (e.isFile) out += `\n== ${p}\n` + await Deno.readTextFile(p).catch(() => "");
  }
  return out;
}

Deno.test("security: no door token in the trace, logs, files, errors, or any child's environment and argv", async () => {
  const mur = await startMur({
    manifest: {
      name: "secret",
      version: "0.1.0",
      network: { authentication: AUTH },
      capabilities: { shell: { allow: ["sh"] } },
      tools: [{
        name: "dump",
        description: "dump",
        input_schema: { type: "object" },
        command: ["./tools/dump.sh"],
      }],
      hooks: [{
        name: "dumper",
        binding: "on-task-end",
        execution_mode: "blocking",
        commit_policy: "none",
        command: ["./hooks/dump.sh"],
      }],
    },
    files: {
      "tools/dump.sh": `#!/bin/sh\nset -- tool\n${DUMP}\necho dumped\n`,
      "hooks/dump.sh": `#!/bin/sh\nset -- hook\n${DUMP}\necho '{}'\n`,
    },
    script: {
      tasks: [{
        turns: [
          {
            steps: [{
              tool_call: { id: "s", name: "sh", input: { command: `set -- shell; ${DUMP}` } },
            }],
          },
          { steps: [{ tool_call: { id: "d", name: "dump", input: {} } }] },
          { steps: [{ text: "dumped everything" }] },
        ],
      }],
    },
    args: ["--task", "dump your environment"],
    // The operator's shell may hold another session's token for `mur watch --url`.
    env: { MURMUR_DOOR_TOKEN: FOREIGN },
  });
  try {
    const tokens = Object.values(mur.ready.tokens!);
    const secrets = [...tokens, FOREIGN];
    const op = mur.ready.tokens!.operator;
    // Refusals: presented tokens (forged from real ones) are never echoed.
    const forged = [op.slice(0, -3) + "AAA", `${op}x`, mur.ready.tokens!.lister];
    const refusals: string[] = [];
    for (const t of forged) {
      const res = await fetch(mur.base + "/", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "a2a-version": "1.0",
          authorization: `Bearer ${t}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: op } }),
      });
      refusals.push(`${res.status} ${[...res.headers].join(" ")} ${await res.text()}`);
    }
    // A GetTask naming a token as the task id: the -32001 answer names the id it was given,
    // which is the caller's own text (not a leak), so the check below leaves these answers out.
    // A watcher with a wrong token: its error message does not print the token it presented.
    const watch = await runMur({
      args: ["watch", "--url", mur.ready.url],
      env: { MURMUR_DOOR_TOKEN: forged[0], NO_COLOR: "1", MURMUR_HOME: mur.home },
    });
    assert.equal(watch.code, 1);
    const watchErr = watch.stderr;

    const st = await Promise.race([
      mur.status,
      new Promise<null>((r) => setTimeout(() => r(null), 30_000)),
    ]);
    assert.ok(st !== null && st.code === 0, mur.stderrLines.join("\n"));
    const wd = mur.ready.workdir;
    for (const who of ["shell", "tool", "hook"]) {
      const env = await Deno.readTextFile(`${wd}/${who}.env`);
      assert.ok(env.includes("PATH="), `${who} wrote its environment`);
      assert.ok((await Deno.readTextFile(`${wd}/${who}.ps`)).includes("ps -eww"), `${who} ran ps`);
    }
    const everything = [
      await allText(wd),
      mur.stderrLines.join("\n"),
      mur.stdoutText().split("\n").slice(1).join("\n"), // after the readiness line, which holds them by design
      refusals.join("\n"),
      watchErr,
    ].join("\n");
    const leaks = secrets.filter((s) => everything.includes(s)).map((s) => {
      const at = everything.indexOf(s);
      const file = everything.lastIndexOf("\n== ", at);
      return `${s.slice(0, 16)}… in ${
        everything.slice(file + 4, everything.indexOf("\n", file + 4))
      }`;
    });
    assert.deepEqual(leaks, []);
    report(
      "token leak checks",
      `${secrets.length} tokens over trace, logs, workdir files, stderr, 3 refusals, a watcher's error, 3 children's environ and ps`,
    );
  } finally {
    await mur.close();
  }
});

const PNG_A = btoa("\x89PNG\r\n\x1a\n-image-A-bytes");
const PNG_B = btoa("\x89PNG\r\n\x1a\n-image-B-bytes-other");

async function sha256(b64: string): Promise<string> {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...d].map((x) => x.toString(16).padStart(2, "0")).join("");
}

async function get(mur: Mur, target: string, token?: string, method = "GET") {
  const headers: [string, string][] = token ? [["Authorization", `Bearer ${token}`]] : [];
  const r = await rawHttp(mur.port, buildRequest(method, target, headers, new Uint8Array()), {
    timeoutMs: 10_000,
  });
  assert.equal(r.kind, "response", `${target}: ${JSON.stringify(r)}`);
  return r.kind === "response" ? r.res : null!;
}

Deno.test("security: attachment paths reach only their own task's images", async () => {
  const mur = await startMur({
    manifest: {
      name: "attach",
      version: "0.1.0",
      network: { authentication: AUTH },
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      tools: [{
        name: "shot",
        description: "shot",
        input_schema: { type: "object" },
        command: ["./tools/shot.sh"],
      }],
    },
    files: {
      // The image depends on the input: {"which":"A"} or {"which":"B"}.
      "tools/shot.sh":
        `#!/bin/sh\nif grep -q B; then D=${PNG_B}; else D=${PNG_A}; fi\nprintf '{"content":[{"type":"image","mimeType":"image/png","data":"%s"}]}' "$D"\n`,
    },
    script: {
      tasks: [
        {
          match: "^A",
          turns: [{ steps: [{ tool_call: { id: "a", name: "shot", input: { which: "A" } } }] }, {
            steps: [{ text: "A" }],
          }],
        },
        {
          match: "^B",
          turns: [{ steps: [{ tool_call: { id: "b", name: "shot", input: { which: "B" } } }] }, {
            steps: [{ text: "B" }],
          }],
        },
      ],
    },
  });
  try {
    const op = mur.ready.tokens!.operator;
    const watcher = mur.ready.tokens!.watcher;
    const send = async (text: string) =>
      ((await mur.rpc("SendMessage", {
        message: { messageId: text, role: "ROLE_USER", parts: [{ text }] },
      }, op)).result as { task: { id: string } }).task.id;
    const a = await send("A");
    const b = await send("B");
    const ha = await sha256(PNG_A);
    const hb = await sha256(PNG_B);

    const ok = await get(mur, `/attachments/${a}/${ha}`, watcher);
    assert.equal(ok.status, 200);
    assert.equal(header(ok, "content-type"), "image/png");
    assert.deepEqual(ok.body, Uint8Array.from(atob(PNG_A), (c) => c.charCodeAt(0)));
    assert.equal((await get(mur, `/attachments/${b}/${hb}`, watcher)).status, 200);

    const refused: [string, string | undefined, number][] = [
      [`/attachments/${a}/${ha}`, undefined, 401],
      [`/attachments/${a}/${ha}`, mur.ready.tokens!.lister, 403],
      [`/attachments/${b}/${ha}`, watcher, 404], // another task's hash
      [`/attachments/${a}/${hb}`, watcher, 404],
      [`/attachments/${a}/${ha.toUpperCase()}`, watcher, 404],
      [`/attachments/${a}/${ha}/`, watcher, 404],
      [`/attachments/${a}/${ha}?x=1`, watcher, 404],
      [`/attachments/${a}%2F${ha}`, watcher, 404], // encoded slash
      [`/attachments/${a}/${ha}%2F..`, watcher, 404],
      [`/attachments/${a}%2f..%2f${b}/${hb}`, watcher, 404],
      [`/attachments/${a}/%2e%2e/${b}/${ha}`, watcher, 404], // dot segments land on task b: not its hash
      [`/attachments/${a}/../${b}/${ha}`, watcher, 404],
      [`/attachments/${a}/${ha}/../../../etc/passwd`, watcher, 404],
      [`/attachments/..%2f..%2f..%2fetc%2fpasswd/${ha}`, watcher, 404],
      [`/attachments/tsk_${"0".repeat(32)}/${ha}`, watcher, 404],
      [`/attachments//${ha}`, watcher, 404],
      [`/attachments/${a}`, watcher, 404],
    ];
    for (const [target, token, status] of refused) {
      const res = await get(mur, target, token);
      assert.equal(res.status, status, target);
      if (status === 404) assert.equal(res.body.length, 0, target);
    }
    // Dot segments are resolved before routing (RFC 3986 §5.2.4): they can name another task the
    // caller sees, never a file, and only that task's own images.
    const viaDots = await get(mur, `/attachments/${a}/../${b}/${hb}`, watcher);
    assert.equal(viaDots.status, 200);
    assert.deepEqual(viaDots.body, Uint8Array.from(atob(PNG_B), (c) => c.charCodeAt(0)));
    const post = await get(mur, `/attachments/${a}/${ha}`, watcher, "POST");
    assert.equal(post.status, 405);
    assert.equal(header(post, "allow"), "GET");
    report("attachment path checks", refused.length + 4);
  } finally {
    await mur.close();
  }
});

Deno.test("security: a non-loopback --bind without authentication warns W-SEC-032 (and not with it)", async () => {
  const cases: [string, boolean, boolean][] = [
    ["0.0.0.0", false, true],
    ["0.0.0.0", true, false],
    ["127.0.0.1", false, false],
  ];
  for (const [bind, auth, warns] of cases) {
    const mur = await startMur({
      manifest: {
        name: "bind",
        version: "0.1.0",
        ...(auth ? { network: { authentication: AUTH } } : {}),
      },
      script: { tasks: [{ turns: [{ steps: [{ text: "hi" }] }] }] },
      args: ["--bind", bind],
      env: { MURMUR_A2A_TIMEOUT_SECS: "20" },
    });
    try {
      // Reached through loopback only.
      const card = await fetch(`http://127.0.0.1:${mur.port}/.well-known/agent-card.json`);
      assert.equal(card.status, 200);
      await card.body?.cancel();
      const warned = mur.stderrLines.some((l) =>
        /^warning\[W-SEC-032\]/.test(l) && l.includes(bind)
      );
      assert.equal(warned, warns, `${bind} auth=${auth}: ${mur.stderrLines.join("\n")}`);
    } finally {
      await mur.close();
    }
  }
});

Deno.test("security: the body cap (8 MiB) and the header cap (64 KiB, ~128 lines, Deno.serve's) hold", async () => {
  const mur = await startMur({
    manifest: {
      name: "caps",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: { tasks: [{ turns: [{ steps: [{ text: "hi" }] }] }] },
  });
  try {
    const CAP = 8 * 1024 * 1024;
    const h: [string, string][] = [["Content-Type", "application/json"], ["A2A-Version", "1.0"]];
    const envelope = (pad: number) => {
      const base = `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`;
      return new TextEncoder().encode(base.slice(0, -1) + " ".repeat(pad) + "}");
    };
    const exact = envelope(CAP - 57);
    assert.equal(exact.length, CAP);
    const atCap = await rawHttp(mur.port, buildRequest("POST", "/", h, exact));
    assert.equal(
      atCap.kind === "response" && atCap.res.status,
      200,
      JSON.stringify(atCap).slice(0, 300),
    );
    // One byte over, sent with Content-Length (refused before reading) and chunked (while reading).
    const over = envelope(CAP - 56);
    const declared = await rawHttp(mur.port, buildRequest("POST", "/", h, over));
    assert.equal(declared.kind === "response" && declared.res.status, 413);
    const chunkHead = buildRequest(
      "POST",
      "/",
      [...h, ["Transfer-Encoding", "chunked"]],
      new Uint8Array(),
      { contentLength: null },
    );
    const parts = [
      chunkHead,
      latin1(`${over.length.toString(16)}\r\n`),
      over,
      latin1("\r\n0\r\n\r\n"),
    ];
    const chunked = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (chunked.set(p, at), at + p.length), 0);
    const streamed = await rawHttp(mur.port, chunked);
    assert.equal(streamed.kind === "response" && streamed.res.status, 413);

    // Headers: 60 KiB is served; a head over 64 KiB or with too many lines is refused (400, or the
    // connection is reset while the client still writes), and the door keeps serving.
    const ok = await rawHttp(
      mur.port,
      buildRequest("POST", "/", [...h, ["X-Big", "a".repeat(60 * 1024)]], envelope(0)),
    );
    assert.equal(ok.kind === "response" && ok.res.status, 200);
    for (
      const extra of [
        [["X-Big", "a".repeat(70 * 1024)]],
        Array.from({ length: 200 }, (_, i) => [`X-H${i}`, "v"]),
      ] as [string, string][][]
    ) {
      const r = await rawHttp(mur.port, buildRequest("POST", "/", [...h, ...extra], envelope(0)));
      assert.ok(
        r.kind === "reset" || (r.kind === "response" && r.res.status === 400),
        JSON.stringify(r).slice(0, 300),
      );
    }
    const after = await mur.rpc("ListTasks");
    assert.ok(after.result);
    assert.ok(mur.alive());
  } finally {
    await mur.close();
  }
});
