/**
 * ListTasks (docs/door.md): filters, cursor paging, newest status first,
 * nextPageToken, totalSize, includeArtifacts, proto field names; its -32602 refusals. Also the
 * agent card's cache headers and the text the model receives for data parts and
 * referenceTaskIds (observed through the scripted driver's `match` on the task text).
 */
import assert from "node:assert/strict";
import { assertRpcError, call, capsule, list, message, submit, waitTask } from "./helpers.ts";
import { until } from "../helpers/until.ts";
import { CARD_METHODS } from "../helpers/methods.ts";

const script = {
  tasks: [
    { match: "^slow", turns: [{ steps: [{ text: "slow", delay_ms: 8_000 }] }] },
    {
      match:
        '^look\\n```data media-type=application/json\\n\\{\\n  "a": \\[\\n    1,\\n    2\\n  \\]\\n\\}\\n```$',
      turns: [{ steps: [{ text: "data rendered" }] }],
    },
    {
      match:
        "^refs\\n\\nReferenced tasks:\\n- (tsk_[0-9a-f]{32}): completed\\n```response\\nanswer A\\n```\\n- tsk_[0-9a-f]{32}: failed: task failed \\(driver_error\\): scripted failure\\n- tsk_nope: not a task this capsule holds$",
      turns: [{ steps: [{ text: "refs rendered" }] }],
    },
    {
      match: '^snake\n````data media-type=text/x_y filename=a_b_c\n"has ``` inside"\n````$',
      turns: [{ steps: [{ text: "snake rendered" }] }],
    },
    { match: "^fail", turns: [{ steps: [{ error: "scripted failure" }] }] },
    { match: "^A", turns: [{ steps: [{ text: "answer A" }] }] },
    { turns: [{ steps: [{ text: "ok" }] }] },
  ],
};

Deno.test("ListTasks: filters, newest first, cursor pages, totalSize, includeArtifacts, proto names", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
    script,
  });
  try {
    const done: string[] = [];
    for (
      const [text, ctx] of [["a1", "ctx-a"], ["a2", "ctx-a"], ["b1", "ctx-b"], ["a3", "ctx-a"], [
        "b2",
        "ctx-b",
      ]]
    ) {
      const a = await call(cap.base, "SendMessage", message(text, { contextId: ctx }));
      assert.equal(a.json.result.task.status.state, "TASK_STATE_COMPLETED");
      done.push(a.json.result.task.id);
      // Distinct status timestamps (ms resolution): wait until the clock has passed this one.
      const stamp = Date.parse(a.json.result.task.status.timestamp);
      await until(
        "the clock passes the last status timestamp",
        () => Date.now() > stamp ? true : undefined,
        5000,
        1,
      );
    }
    const slow = await submit(cap.base, "slow one", { extra: { contextId: "ctx-b" } });
    await waitTask(cap.base, slow.id, (t) => t.status.state === "TASK_STATE_WORKING");
    const queued = await submit(cap.base, "queued", { extra: { contextId: "ctx-a" } });

    const all = await list(cap.base);
    assert.equal(all.totalSize, 7);
    assert.equal(all.pageSize, 50);
    assert.equal(all.nextPageToken, "");
    const stamps = all.tasks.map((t) => Date.parse(t.status.timestamp));
    assert.deepEqual([...stamps].sort((a, b) => b - a), stamps, "newest status first");
    assert.equal(all.tasks[0].id, queued.id);
    for (const t of all.tasks) assert.equal("artifacts" in t, false, "no artifacts key by default");
    const withArt = await list(cap.base, { includeArtifacts: true });
    const a1 = withArt.tasks.find((t) => t.id === done[0])!;
    assert.deepEqual(a1.artifacts, [{
      artifactId: "response",
      name: "response",
      parts: [{ text: "ok", mediaType: "text/plain" }],
    }]);
    assert.equal("artifacts" in withArt.tasks.find((t) => t.id === slow.id)!, false);
    assert.deepEqual(
      (await list(cap.base, { include_artifacts: true })).tasks.map((t) => "artifacts" in t),
      withArt.tasks.map((t) => "artifacts" in t),
    );

    // Filters, in lowerCamel and proto field names.
    const ctxA = await list(cap.base, { contextId: "ctx-a" });
    assert.equal(ctxA.totalSize, 4);
    assert.deepEqual(new Set(ctxA.tasks.map((t) => t.contextId)), new Set(["ctx-a"]));
    assert.equal((await list(cap.base, { context_id: "ctx-b" })).totalSize, 3);
    assert.equal((await list(cap.base, { contextId: "ctx-none" })).totalSize, 0);
    for (
      const [status, n] of [
        ["TASK_STATE_COMPLETED", 5],
        ["TASK_STATE_WORKING", 1],
        ["TASK_STATE_SUBMITTED", 1],
        ["TASK_STATE_FAILED", 0],
        ["TASK_STATE_UNSPECIFIED", 7],
        [3, 5],
        [0, 7],
      ] as const
    ) {
      assert.equal((await list(cap.base, { status })).totalSize, n, String(status));
    }
    const both = await list(cap.base, { contextId: "ctx-b", status: "TASK_STATE_COMPLETED" });
    assert.deepEqual(both.tasks.map((t) => t.id), [done[4], done[2]]);
    const third = all.tasks[2];
    const after = await list(cap.base, { statusTimestampAfter: third.status.timestamp });
    assert.deepEqual(after.tasks.map((t) => t.id), all.tasks.slice(0, 3).map((t) => t.id));
    assert.equal(
      (await list(cap.base, { status_timestamp_after: "2000-01-01T00:00:00Z" })).totalSize,
      7,
    );
    assert.equal(
      (await list(cap.base, { statusTimestampAfter: "2999-01-01T00:00:00+02:00" })).totalSize,
      0,
    );

    // Cursor pages of 2: every task once, in order, the last page's token "".
    const seen: string[] = [];
    let token = "";
    let pages = 0;
    do {
      const page = await list(cap.base, { page_size: 2, ...(token ? { pageToken: token } : {}) });
      assert.equal(page.pageSize, 2);
      assert.equal(page.totalSize, 7);
      seen.push(...page.tasks.map((t) => t.id));
      token = page.nextPageToken;
      pages++;
      assert.ok(pages <= 4);
    } while (token);
    assert.equal(pages, 4);
    assert.deepEqual(seen, all.tasks.map((t) => t.id));
    // Filters and paging together.
    const p1 = await list(cap.base, { contextId: "ctx-a", pageSize: 3 });
    assert.equal(p1.tasks.length, 3);
    const p2 = await list(cap.base, {
      contextId: "ctx-a",
      pageSize: 3,
      pageToken: p1.nextPageToken,
    });
    assert.equal(p2.tasks.length, 1);
    assert.equal(p2.nextPageToken, "");
    assert.equal(p2.totalSize, 4);
    // Boundaries of pageSize; string int32 is ProtoJSON too.
    assert.equal((await list(cap.base, { pageSize: 1 })).tasks.length, 1);
    assert.equal((await list(cap.base, { pageSize: 100 })).tasks.length, 7);
    assert.equal((await list(cap.base, { pageSize: "3" })).tasks.length, 3);

    // Refusals, each message exact.
    const refusals: [Record<string, unknown>, string][] = [
      [{ pageSize: 0 }, "pageSize must be an integer from 1 to 100"],
      [{ pageSize: 101 }, "pageSize must be an integer from 1 to 100"],
      [{ pageSize: 150 }, "pageSize must be an integer from 1 to 100"],
      [{ pageSize: 2.5 }, "pageSize must be an integer from 1 to 100"],
      [{ page_size: "ten" }, "pageSize must be an integer from 1 to 100"],
      [{ status: "DONE" }, 'status "DONE" is not a TaskState; give a TASK_STATE_* name'],
      [{ status: -1 }, "status -1 is not a TaskState; give a TASK_STATE_* name"],
      [{ status: 99 }, "status 99 is not a TaskState; give a TASK_STATE_* name"],
      [{ status: "completed" }, 'status "completed" is not a TaskState; give a TASK_STATE_* name'],
      [{ contextId: 5 }, "contextId must be a string"],
      [{ includeArtifacts: "yes" }, "includeArtifacts must be a boolean"],
      [{ pageToken: 7 }, "pageToken must be a string"],
      [
        { pageToken: "garbage!" },
        "pageToken is not a nextPageToken this door issued; start again without it",
      ],
      [{ historyLength: -1 }, "historyLength must be a non-negative integer"],
      [
        { statusTimestampAfter: "yesterday" },
        "statusTimestampAfter must be an RFC 3339 timestamp such as 2026-10-13T09:00:00.123Z",
      ],
      [
        { statusTimestampAfter: "2026-10-13" },
        "statusTimestampAfter must be an RFC 3339 timestamp such as 2026-10-13T09:00:00.123Z",
      ],
    ];
    for (const [params, text] of refusals) {
      for (const id of ["l", 6]) {
        assertRpcError(
          await call(cap.base, "ListTasks", params, { id }),
          id,
          -32602,
          `Invalid params: ${text}`,
        );
      }
    }
  } finally {
    await cap.close();
  }
});

Deno.test("what the model receives: data parts pretty-printed in a fence, referenced tasks appended", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
    script,
  });
  try {
    const d = await call(cap.base, "SendMessage", {
      message: {
        messageId: "md",
        role: "ROLE_USER",
        parts: [{ text: "look" }, { data: { a: [1, 2] }, mediaType: "application/json" }],
      },
    });
    assert.equal(d.json.result.task.artifacts[0].parts[0].text, "data rendered", d.text);
    // Proto field names; label values with whitespace, backticks and `=` made safe; the fence
    // one backtick longer than the longest run inside.
    const snake = await call(cap.base, "SendMessage", {
      message: {
        message_id: "ms",
        role: "ROLE_USER",
        context_id: "ctx-snake",
        parts: [{ text: "snake" }, {
          data: "has ``` inside",
          media_type: "text/x y",
          filename: "a`b=c",
        }],
      },
    });
    assert.equal(snake.json.result.task.contextId, "ctx-snake");
    assert.equal(snake.json.result.task.artifacts[0].parts[0].text, "snake rendered", snake.text);
    const a = await call(cap.base, "SendMessage", message("A please"));
    const f = await call(cap.base, "SendMessage", message("fail please"));
    assert.equal(f.json.result.task.status.state, "TASK_STATE_FAILED");
    const r = await call(
      cap.base,
      "SendMessage",
      message("refs", {
        referenceTaskIds: [a.json.result.task.id, f.json.result.task.id, "tsk_nope", "tsk_nope"],
      }),
    );
    assert.equal(r.json.result.task.artifacts[0].parts[0].text, "refs rendered", r.text);
  } finally {
    await cap.close();
  }
});

Deno.test("agent card: cache headers, ETag revalidation, shape of a public door", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script,
  });
  try {
    const res = await fetch(cap.base + "/.well-known/agent-card.json");
    const body = await res.text();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.headers.get("cache-control"), "public, max-age=300, must-revalidate");
    const etag = res.headers.get("etag")!;
    assert.match(etag, /^"[0-9a-f]{16}"$/);
    const modified = res.headers.get("last-modified")!;
    assert.ok(Date.parse(modified) <= Date.now());
    assert.match(modified, /^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/);
    // The same bytes every time; If-None-Match (strong, weak, listed, *) → 304 with no body.
    assert.equal(await (await fetch(cap.base + "/.well-known/agent-card.json")).text(), body);
    for (const inm of [etag, `W/${etag}`, `"zzz", ${etag}`, "*"]) {
      const r = await fetch(cap.base + "/.well-known/agent-card.json", {
        headers: { "if-none-match": inm },
      });
      assert.equal(r.status, 304, inm);
      assert.equal(r.headers.get("etag"), etag);
      assert.equal(await r.text(), "");
    }
    const miss = await fetch(cap.base + "/.well-known/agent-card.json", {
      headers: { "if-none-match": '"other"' },
    });
    assert.equal(miss.status, 200);
    const card = JSON.parse(await miss.text());
    assert.deepEqual(Object.keys(card), [
      "name",
      "description",
      "version",
      "supportedInterfaces",
      "capabilities",
      "securitySchemes",
      "securityRequirements",
      "defaultInputModes",
      "defaultOutputModes",
      "skills",
    ]);
    assert.equal(card.description, "Murmur capsule door 0.1.0");
    assert.deepEqual(card.supportedInterfaces, [
      { url: `http://${cap.ready.url}`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `http://${cap.ready.url}`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
    assert.equal(card.capabilities.streaming, true);
    assert.equal(card.capabilities.pushNotifications, false);
    assert.equal(card.capabilities.extendedAgentCard, false);
    const [door, capsuleExt, stream] = card.capabilities.extensions;
    assert.deepEqual(door.params, {
      methods: [...CARD_METHODS],
      peerTasks: false, // no exports.peer_tasks.accept (docs/door.md "Peer tasks and trust")
    });
    assert.equal(capsuleExt.params.sessionId, cap.ready.session_id);
    assert.equal(stream.required, false);
    assert.equal(stream.params.pollMethod, "murmur.PollSession");
    assert.equal(stream.params.watchRoute, "GET /murmur/session:watch");
    assert.equal(stream.params.pollRoute, "GET /murmur/session:poll");
    assert.deepEqual(card.securitySchemes, {});
    assert.deepEqual(card.securityRequirements, []);
    assert.deepEqual(card.skills, [{
      id: "task",
      name: "Run a task",
      description: "Runs one task given as a text message and reports its outcome.",
      tags: ["task"],
    }]);
  } finally {
    await cap.close();
  }
});
