/**
 * Bad input never crashes the door or changes state: truncated JSON, invalid UTF-8, deep
 * nesting, wrong types at every level of every method's params, huge ids, bodies over the 8 MiB
 * cap (413 JSON, with content-length and chunked). After each batch: the process is alive and
 * ListTasks answers the same.
 */
import assert from "node:assert/strict";
import type { Capsule } from "../helpers/capsule.ts";
import { call, capsule, list, message, portOf, post, rawRequest, rpcBody } from "./helpers.ts";

const CAP = 8 * 1024 * 1024;
const TOO_LARGE = {
  error: "payload_too_large",
  message:
    "this door reads request bodies of at most 8388608 bytes (8 MiB); send a smaller message",
};

async function withQueue(fn: (cap: Capsule, unchanged: () => Promise<void>) => Promise<void>) {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
  });
  try {
    const seeded = await call(
      cap.base,
      "SendMessage",
      message("seed", { contextId: "ctx-seed" }),
    );
    assert.equal(seeded.json.result.task.status.state, "TASK_STATE_COMPLETED");
    const snapshot = JSON.stringify(await list(cap.base, { includeArtifacts: true }));
    const unchanged = async () => {
      assert.equal(
        JSON.stringify(await list(cap.base, { includeArtifacts: true })),
        snapshot,
        "state changed",
      );
    };
    await fn(cap, unchanged);
  } finally {
    await cap.close();
  }
}

/** Any answer but a crash: 200 with a JSON-RPC envelope for `id`, and never -32603. */
function assertAnswered(a: Awaited<ReturnType<typeof post>>, id: unknown, what: string) {
  assert.equal(a.status, 200, `${what}: ${a.text.slice(0, 300)}`);
  assert.equal(a.json?.jsonrpc, "2.0", what);
  assert.deepEqual(a.json.id, id, what);
  if (a.json.error) assert.notEqual(a.json.error.code, -32603, `${what}: ${a.text.slice(0, 300)}`);
}

Deno.test("truncated JSON and invalid UTF-8: -32700 every time, nothing changes", async () => {
  await withQueue(async (cap, unchanged) => {
    const body = rpcBody("SendMessage", message("héllo ✓ wörld", {}, { returnImmediately: true }));
    const bytes = new TextEncoder().encode(body);
    for (let n = 1; n < bytes.length; n += 7) {
      const a = await post(cap.base, bytes.slice(0, n));
      // A cut inside a multi-byte character is invalid UTF-8: also -32700.
      assert.equal(a.json?.error?.code, -32700, `cut at ${n}: ${a.text}`);
      assert.equal(a.json.id, null);
    }
    for (
      const bad of [
        [0x80],
        [0xff, 0xfe, 0x7b, 0x7d],
        [0xed, 0xa0, 0x80], // an encoded surrogate
        [0xc0, 0xaf], // overlong "/"
        [0xf8, 0x88, 0x80, 0x80, 0x80],
      ]
    ) {
      const inString = new TextEncoder().encode(
        rpcBody("SendMessage", message("XX", {}, { returnImmediately: true })),
      );
      const i = new TextDecoder().decode(inString).indexOf("XX");
      const mixed = new Uint8Array([...inString.slice(0, i), ...bad, ...inString.slice(i + 2)]);
      const a = await post(cap.base, mixed);
      assert.equal(a.json?.error?.code, -32700, a.text);
    }
    await unchanged();
  });
});

Deno.test("deep nesting: 100k nested arrays and objects anywhere are refused -32700 before parsing, without harm", async () => {
  await withQueue(async (cap, unchanged) => {
    const n = 100_000;
    const arr = "[".repeat(n) + "]".repeat(n);
    const obj = '{"a":'.repeat(n) + "1" + "}".repeat(n);
    const env = (inner: string, id = '"d"') =>
      `{"jsonrpc":"2.0","id":${id},"method":"SendMessage","params":${inner}}`;
    const msg = (field: string, v: string) =>
      env(
        `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],${field}:${v}},"configuration":{"returnImmediately":true}}`,
      );
    // JSON nested deeper than MAX_JSON_DEPTH (512) is refused as a payload before it is parsed,
    // wherever the nesting sits: parsing it would hold the door's one thread.
    const bodies = [
      arr,
      obj,
      env(arr),
      env(obj),
      msg('"taskId"', arr),
      msg('"contextId"', obj),
      env(`{"message":{"messageId":"m","role":"ROLE_USER","parts":${arr}}}`),
    ];
    for (const method of ["GetTask", "CancelTask", "ListTasks", "SubscribeToTask"]) {
      bodies.push(`{"jsonrpc":"2.0","id":1,"method":"${method}","params":{"id":${arr}}}`);
    }
    for (const body of bodies) {
      const a = await post(cap.base, body);
      assert.equal(a.json?.error?.code, -32700, `${body.slice(0, 120)}: ${a.text.slice(0, 200)}`);
      assert.deepEqual(a.json.id, null);
    }
    // Under the cap, nesting in the wrong place is the usual refusal.
    const shallow = "[".repeat(300) + "]".repeat(300);
    const cases: [string, number, unknown][] = [
      [shallow, -32600, null],
      [env(shallow), -32602, "d"],
      [msg('"referenceTaskIds"', shallow), -32602, "d"],
    ];
    for (const [body, code, id] of cases) {
      const a = await post(cap.base, body);
      assert.equal(a.json?.error?.code, code, `${body.slice(0, 120)}: ${a.text.slice(0, 200)}`);
      assert.deepEqual(a.json.id, id);
    }
    await unchanged();
  });
});

Deno.test("a deeply nested data part under the depth cap is accepted and rendered compact, the task runs", async () => {
  await withQueue(async (cap) => {
    const n = 400;
    const body =
      `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":${
        "[".repeat(n) + "]".repeat(n)
      }}]}}}`;
    const a = await post(cap.base, body);
    assert.equal(a.json.result.task.status.state, "TASK_STATE_COMPLETED", a.text.slice(0, 300));
    const trace = await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`);
    const start = trace.split("\n").filter((l) => l.includes('"task_start"')).map((l) =>
      JSON.parse(l)
    ).find((e) => e.task_id === a.json.result.task.id);
    // Compact past 64 levels: the 2n brackets plus the fence, not a quadratic pretty-print.
    assert.ok(start.message_parts_bytes < 2 * n + 100, String(start.message_parts_bytes));
  });
});

/** Replaces the value at `path` inside `base` (a fresh copy). */
function withValue(base: Record<string, unknown>, path: (string | number)[], v: unknown) {
  const out = structuredClone(base);
  // deno-lint-ignore no-explicit-any
  let o: any = out;
  for (const k of path.slice(0, -1)) o = o[k];
  o[path[path.length - 1]] = v;
  return out;
}

Deno.test("wrong types at every level of every method's params: refused, nothing changes", async () => {
  await withQueue(async (cap, unchanged) => {
    const wrong = [null, true, 0, -1, 1.5, "", "x", [], [1], {}, { a: 1 }, 1e308];
    const goodMessage = {
      message: {
        messageId: "m-1",
        role: "ROLE_USER",
        parts: [{ text: "x" }],
      },
      configuration: { returnImmediately: true },
    };
    // Paths the door validates; each wrong value there must be refused (or be a value that
    // reads as "absent" / "none", which the door then refuses for another reason or ignores).
    const checked: [string, Record<string, unknown>, (string | number)[]][] = [
      ["SendMessage", goodMessage, ["message"]],
      ["SendMessage", goodMessage, ["message", "messageId"]],
      ["SendMessage", goodMessage, ["message", "role"]],
      ["SendMessage", goodMessage, ["message", "parts"]],
      ["SendMessage", goodMessage, ["message", "parts", 0]],
      ["SendMessage", goodMessage, ["message", "parts", 0, "text"]],
      ["SendMessage", goodMessage, ["configuration"]],
      ["SendMessage", goodMessage, ["configuration", "returnImmediately"]],
      ["SendStreamingMessage", goodMessage, ["message"]],
      ["SendStreamingMessage", goodMessage, ["message", "parts", 0]],
      ["GetTask", { id: "tsk_x" }, ["id"]],
      ["CancelTask", { id: "tsk_x" }, ["id"]],
      ["SubscribeToTask", { id: "tsk_x" }, ["id"]],
      ["ListTasks", {}, ["contextId"]],
      ["ListTasks", {}, ["status"]],
      ["ListTasks", {}, ["pageSize"]],
      ["ListTasks", {}, ["pageToken"]],
      ["ListTasks", {}, ["statusTimestampAfter"]],
      ["ListTasks", {}, ["includeArtifacts"]],
      ["ListTasks", {}, ["historyLength"]],
    ];
    let n = 0;
    for (const [method, base, path] of checked) {
      for (const v of wrong) {
        // ProtoJSON reads null as "absent": a null configuration is a valid blocking send.
        if (method === "SendMessage" && path[0] === "configuration" && v === null) continue;
        // Values of the right type are not wrong: any object is a configuration, any boolean a
        // returnImmediately, any non-empty string a messageId, any string a text.
        const last = path[path.length - 1];
        if (last === "configuration" && typeof v === "object" && v && !Array.isArray(v)) continue;
        if (last === "returnImmediately" && typeof v === "boolean") continue;
        if (last === "messageId" && typeof v === "string" && v) continue;
        if (last === "text" && typeof v === "string") continue;
        const params = withValue(base, path, v);
        const id = `w${n++}`;
        const a = await post(cap.base, rpcBody(method, params, id));
        const what = `${method} ${path.join(".")}=${JSON.stringify(v)}`;
        assertAnswered(a, id, what);
        // Only ListTasks may answer a result: its filters read null, 0, "" as "none" / empty.
        if (method !== "ListTasks") assert.ok(a.json.error, `${what}: ${a.text.slice(0, 200)}`);
      }
    }
    // Unknown keys are ignored everywhere (ProtoJSON): reads answer normally.
    const extra = await call(cap.base, "ListTasks", { tckExtraParam: [1, { a: null }] });
    assert.equal(extra.json.result.totalSize, 1);
    const g = await call(cap.base, "GetTask", {
      id: extra.json.result.tasks[0].id,
      tenant: { x: 1 },
    });
    assert.ok(g.json.result, g.text);
    // historyLength is read on GetTask as on ListTasks: a value that is no length is refused.
    const junk = await call(cap.base, "GetTask", {
      id: extra.json.result.tasks[0].id,
      historyLength: "junk",
    });
    assert.equal(junk.json.error?.code, -32602, junk.text);
    await unchanged();
  });
});

Deno.test("huge ids: long strings and the largest safe integers echoed verbatim; larger integers -32600", async () => {
  await withQueue(async (cap, unchanged) => {
    const long = "i".repeat(1_000_000);
    for (const id of [long, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, "🦀".repeat(1000)]) {
      const a = await post(cap.base, rpcBody("GetTask", { id: "tsk_none" }, id));
      assert.equal(a.json.error.code, -32001);
      assert.equal(a.json.id, id);
      const l = await post(cap.base, rpcBody("ListTasks", {}, id));
      assert.equal(l.json.id, id);
    }
    for (const raw of ["9007199254740993", "1e400", "123456789012345678901234567890", "-1e20"]) {
      const a = await post(cap.base, `{"jsonrpc":"2.0","id":${raw},"method":"ListTasks"}`);
      assert.equal(a.json.error.code, -32600, raw);
      assert.equal(a.json.id, null);
    }
    await unchanged();
  });
});

Deno.test("bodies over 8 MiB: 413 with a JSON body, declared or chunked; exactly 8 MiB is read", async () => {
  await withQueue(async (cap, unchanged) => {
    const port = portOf(cap);
    const head = (lines: string[]) =>
      [
        "POST / HTTP/1.1",
        `host: 127.0.0.1:${port}`,
        "content-type: application/json",
        "a2a-version: 1.0",
        ...lines,
        "",
        "",
      ].join("\r\n");
    // Declared too large: answered before a byte of body is sent.
    const declared = await rawRequest(port, head([`content-length: ${CAP + 1}`]), undefined, 5_000);
    assert.equal(declared.status, 413);
    assert.deepEqual(declared.headers.get("content-type"), ["application/json"]);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(declared.body)), TOO_LARGE);

    // Chunked, no content-length: refused once the running total passes the cap.
    const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
    const chunked = await rawRequest(
      port,
      head(["transfer-encoding: chunked"]),
      async (write, answered) => {
        const size = new TextEncoder().encode(`${chunk.length.toString(16)}\r\n`);
        const crlf = new TextEncoder().encode("\r\n");
        for (let sent = 0; sent < CAP * 2 && !answered(); sent += chunk.length) {
          await write(size);
          await write(chunk);
          await write(crlf);
        }
      },
    );
    assert.equal(chunked.status, 413);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(chunked.body)), TOO_LARGE);

    // Through fetch with a streamed body (chunked): the same 413.
    let pushed = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pushed > CAP * 2) return c.close();
        pushed += chunk.length;
        c.enqueue(chunk);
      },
    });
    const viaFetch = await post(cap.base, stream);
    assert.equal(viaFetch.status, 413);
    assert.deepEqual(viaFetch.json, TOO_LARGE);

    // Exactly at the cap: read and answered (padding in an ignored key).
    const shell = rpcBody("ListTasks", { pad: "" }, "cap");
    const exact = shell.replace('"pad":""', `"pad":"${"p".repeat(CAP - shell.length)}"`);
    assert.equal(new TextEncoder().encode(exact).length, CAP);
    const ok = await post(cap.base, exact);
    assert.equal(ok.json.id, "cap");
    assert.ok(ok.json.result, ok.text.slice(0, 200));
    const over = await post(cap.base, exact + " ");
    assert.equal(over.status, 413);
    assert.deepEqual(over.json, TOO_LARGE);
    await unchanged();
  });
});

Deno.test("ProtoJSON null is absent: a message with null (or snake_case null) ids and refs is a new task; a number is -32602", async () => {
  await withQueue(async (cap) => {
    for (const key of ["taskId", "task_id", "contextId", "context_id", "referenceTaskIds"]) {
      const a = await call(cap.base, "SendMessage", message(`null ${key}`, { [key]: null }));
      assert.equal(a.json.result?.task?.status?.state, "TASK_STATE_COMPLETED", `${key}: ${a.text}`);
    }
    const before = JSON.stringify(await list(cap.base, {}));
    for (const key of ["task_id", "context_id"]) {
      const a = await call(cap.base, "SendMessage", message("typed", { [key]: 7 }));
      assert.equal(a.json.error?.code, -32602, a.text);
      assert.match(a.json.error.message, /must be a string/);
    }
    assert.equal(JSON.stringify(await list(cap.base, {})), before, "the refusals changed nothing");
  });
});
