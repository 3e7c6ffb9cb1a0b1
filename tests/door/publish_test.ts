/**
 * Files and data out (docs/protocol.md "Files and data"): a scripted capsule writes `report.md`,
 * `chart.png` and a 5 MiB file into its workdir and publishes them with the `publish` builtin; a
 * tool declared `output: data` becomes a `data` artifact. The task ends with those artifacts (the
 * small files inline as `raw` parts with mediaType and filename, the large one as a `url` part);
 * the url is downloadable with a credential holding GetTask and with no other; paths outside the
 * workdir and through a symbolic link are refused with their codes and publish nothing. Read with
 * the real `@a2a-js/sdk` client.
 */
import assert from "node:assert/strict";
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";
import { capsule } from "./helpers.ts";
import { runMur } from "../helpers/mur.ts";
import { collect, streamRequest } from "../helpers/sse.ts";
import { BIG, PNG_BYTES, publishingCapsule } from "./publish_fixture.ts";

const loopback = (token?: string): typeof fetch => (input, init) => {
  const headers = new Headers(init?.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  return fetch(
    String(input instanceof Request ? input.url : input).replace("//localhost:", "//127.0.0.1:"),
    { ...init, headers },
  );
};

// deno-lint-ignore no-explicit-any
const q = (x: unknown) => x as any;

Deno.test("publish: report.md and chart.png inline, a 5 MiB file by url for GetTask's scope only, data from a data tool, refusals with codes", async () => {
  const cap = await capsule({
    ...publishingCapsule({
      network: {
        authentication: {
          credentials: {
            reader: { scopes: ["GetTask", "SendMessage"] },
            lister: { scopes: ["ListTasks", "SendMessage"] },
          },
        },
      },
    }),
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
  });
  try {
    const token = cap.ready.tokens!.reader;
    const c = await new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl: loopback(token) })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: loopback(token) }),
      preferredTransports: ["JSONRPC"],
    }).createFromUrl(cap.base);
    const task = q(
      await c.sendMessage(q({
        message: {
          messageId: crypto.randomUUID(),
          role: Role.ROLE_USER,
          parts: [{ content: { $case: "text", value: "make a report" }, mediaType: "text/plain" }],
        },
      })),
    );
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task.status));
    const byName = new Map(task.artifacts.map((a: { name: string }) => [a.name, a]));
    // deno-lint-ignore no-explicit-any
    const report = byName.get("report.md") as any;
    assert.equal(report.parts[0].content.$case, "raw");
    assert.equal(
      new TextDecoder().decode(report.parts[0].content.value),
      "# Report\n\nAll good ✓\n",
    );
    assert.equal(report.parts[0].mediaType, "text/markdown");
    assert.equal(report.parts[0].filename, "report.md");
    // deno-lint-ignore no-explicit-any
    const chart = byName.get("chart.png") as any;
    assert.deepEqual([...chart.parts[0].content.value], PNG_BYTES);
    assert.equal(chart.parts[0].mediaType, "image/png");
    // deno-lint-ignore no-explicit-any
    const big = byName.get("big.bin") as any;
    assert.equal(big.parts[0].content.$case, "url");
    assert.equal(big.parts[0].filename, "big.bin");
    // deno-lint-ignore no-explicit-any
    const stats = byName.get("stats") as any;
    assert.deepEqual(stats.parts[0].content.value, { rows: 3, ok: true });
    // Nothing else was published: the refused paths are not artifacts.
    assert.deepEqual([...byName.keys()].sort(), [
      "big.bin",
      "chart.png",
      "report.md",
      "response",
      "stats",
    ]);

    // The url: the caller's credential reads the bytes; another's, or none, does not.
    const url = String(big.parts[0].content.value).replace("//localhost:", "//127.0.0.1:");
    const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("content-length"), String(BIG));
    const body = new Uint8Array(await ok.arrayBuffer());
    assert.equal(body.length, BIG);
    assert.ok(body.every((b) => b === 0x7a));
    const other = await fetch(url, {
      headers: { authorization: `Bearer ${cap.ready.tokens!.lister}` },
    });
    assert.equal(other.status, 403);
    await other.body?.cancel();
    const none = await fetch(url);
    assert.equal(none.status, 401);
    await none.body?.cancel();
    const wrong = await fetch(url.replace(/file-\d+$/, "file-99"), {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(wrong.status, 404);
    await wrong.body?.cancel();

    // The refusals, as the model read them (the trace's tool calls).
    const trace = (await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`)).split("\n")
      .filter(Boolean).map((l) => JSON.parse(l));
    const results = new Map<string, string>();
    for (const l of trace) {
      if (l.event_type === "tool_call" && l.tool_name === "publish") {
        results.set(String(l.input.path), String(l.status));
      }
    }
    assert.equal(results.get("../outside.md"), "error");
    assert.equal(results.get("link.md"), "error");
    // The stream's artifact frames carry the codes the model read.
    const contents = await toolContents(cap.base, cap.ready.tokens!.operator);
    assert.match(contents.get("p4")!, /error\[E-PUB-001\]/);
    assert.match(contents.get("p5")!, /error\[E-PUB-001\]/);
    assert.match(contents.get("p6")!, /error\[E-PUB-002\]/);
    assert.match(contents.get("p7")!, /error\[E-PUB-002\]/);
    assert.match(contents.get("p8")!, /error\[E-PUB-003\]/);
    assert.match(contents.get("p1")!, /published report\.md/);
  } finally {
    await cap.close();
  }
});

/** Every tool call's result text, by call id, from the session's replayed frames. */
async function toolContents(base: string, token: string): Promise<Map<string, string>> {
  const STREAM = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
  const res = await streamRequest(base, "murmur.WatchSession", {}, {
    "last-event-id": "0",
    authorization: `Bearer ${token}`,
  });
  const events = await collect(res, (e) => {
    const r = e.data.result as { statusUpdate?: { status: { state: string } } };
    return r.statusUpdate?.status.state === "TASK_STATE_COMPLETED";
  }, 20_000);
  const out = new Map<string, string>();
  for (const e of events) {
    const r = e.data.result as {
      statusUpdate?: { metadata?: Record<string, Record<string, unknown>> };
    };
    const f = r.statusUpdate?.metadata?.[STREAM];
    if (f?.frame === "artifact") out.set(String(f.toolCallId), String(f.content));
  }
  return out;
}

Deno.test("publish: mur watch prints a line per file (--json carries the event), mur trace show lists them", async () => {
  const cap = await capsule({
    ...publishingCapsule(),
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
  });
  try {
    const sent = await fetch(cap.base, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: "m-w", role: "ROLE_USER", parts: [{ text: "go" }] } },
      }),
    });
    const task = (await sent.json()).result.task;
    assert.equal(task.status.state, "TASK_STATE_COMPLETED");
    const mur = (...args: string[]) =>
      runMur({ args, env: { NO_COLOR: "1", MURMUR_HOME: cap.home } });
    const watched = await mur("watch", "--url", cap.base, "--task", task.id);
    const out = watched.stdout;
    assert.match(out, /^\[artifact\] report\.md text\/markdown 23 B inline$/m, out);
    assert.match(out, /^\[artifact\] chart\.png image\/png 11 B inline$/m, out);
    assert.match(
      out,
      /^\[artifact\] big\.bin application\/octet-stream url http:\/\/\S+\/files\/\S+\/file-3$/m,
      out,
    );
    assert.match(out, /^\[artifact\] stats application\/json data$/m, out);
    const json = await mur("watch", "--url", cap.base, "--task", task.id, "--json");
    const files = json.stdout.split("\n").filter(Boolean)
      .map((l) => JSON.parse(l)).filter((l) =>
        l.event?.artifactUpdate?.artifact?.parts?.[0]?.filename
      )
      .map((l) => l.event.artifactUpdate.artifact.parts[0].filename);
    assert.deepEqual(files, ["report.md", "chart.png", "big.bin"]);
    const shown = await mur("trace", "show", cap.ready.workdir);
    const text = shown.stdout;
    assert.match(text, /Published/, text);
    assert.match(text, /report\.md\s+published/);
    assert.match(text, /\.\.\/outside\.md\s+refused/);
  } finally {
    await cap.close();
  }
});
