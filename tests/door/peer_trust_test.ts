/**
 * Peers and trust at the door (docs/door.md "Peer tasks and trust"): `x-murmur-task-origin: peer`
 * is taken only where `exports.peer_tasks.accept` is true (else one fixed 403
 * `peer_not_accepted`, after the token, on every path and binding), and `x-murmur-task-trust:
 * trusted` is honoured only from a caller whose token proves it (a formation edge token, or the
 * operator token), never from the header alone. What the model receives is read at a fake
 * provider, so "fenced" here means the text the model was sent.
 */
import assert from "node:assert/strict";
import { type Capsule, rpc, startCapsule, userMessage } from "../helpers/capsule.ts";
import { until } from "../helpers/until.ts";
import { type FakeProvider, startFakeProvider } from "../../scripts/fakes/server.ts";
import { mintEdgeToken } from "../../src/door/auth.ts";

const KEY = "sk-test-fake-key-0123456789";
const PEER = { "x-murmur-task-origin": "peer", "x-murmur-task-trust": "trusted" };
/** The refusal, byte for byte (runtime facts: peer_tasks). */
const REFUSAL =
  '{"error":"peer_not_accepted","message":"this capsule does not accept tasks from peers"}';

function fake(): FakeProvider {
  return startFakeProvider({
    kind: "anthropic",
    apiKey: KEY,
    turns: () => ({ steps: [{ text: "done" }], usage: { input: 10, output: 2 } }),
  });
}

function manifest(p: FakeProvider, extra: Record<string, unknown> = {}) {
  return {
    name: "peers",
    version: "0.1.0",
    inference: {
      transport: "http",
      driver: "anthropic",
      model: "claude-haiku-4-5",
      endpoint: p.baseURL,
      api_key: "${FAKE_PROVIDER_KEY}",
      max_tokens: 256,
    },
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
    ...extra,
  };
}

async function capsule(p: FakeProvider, extra: Record<string, unknown> = {}, env = {}) {
  return await startCapsule({
    manifest: manifest(p, extra),
    env: { FAKE_PROVIDER_KEY: KEY, ...env },
  });
}

/** The text of the first user message the provider received that mentions `marker`. */
function sentToModel(p: FakeProvider, marker: string): string | undefined {
  for (const r of p.requests) {
    const msgs = (r.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
    for (const m of msgs) {
      if (m.role !== "user") continue;
      const text = typeof m.content === "string"
        ? m.content
        : (m.content as Array<{ type: string; text?: string }>)
          .map((c) => c.text ?? "").join("");
      if (text.includes(marker)) return text;
    }
  }
  return undefined;
}

async function post(base: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

/** Sends `text` as a task with `headers`; the model's view of it once the task ended. */
async function taskSeenByModel(
  cap: Capsule,
  p: FakeProvider,
  text: string,
  headers: Record<string, string>,
  token?: string,
): Promise<string> {
  const r = await rpc(cap.base, "SendMessage", {
    ...userMessage(text),
    configuration: { returnImmediately: true },
  }, { headers, token });
  assert.ok(r.result?.task?.id, `the task was not taken: ${JSON.stringify(r)}`);
  const id = r.result.task.id;
  await until(`task ${id} ends`, async () => {
    const t = await rpc(cap.base, "GetTask", { id }, { token });
    return /COMPLETED|FAILED|CANCELED/.test(t.result?.status?.state ?? "") ? true : undefined;
  });
  return await until("the provider saw the task", () => sentToModel(p, text));
}

const fenced = (source: string, text: string) =>
  `<untrusted-content source=${source}>\n${text}\n</untrusted-content>`;

Deno.test("peer trust: on a public door a plain caller's peer + trusted headers get the fixed 403, and nothing reaches the model", async () => {
  const p = fake();
  const cap = await capsule(p);
  try {
    const text = `claimed-peer-${crypto.randomUUID()}`;
    const msg = { jsonrpc: "2.0", id: 1, method: "SendMessage", params: userMessage(text) };
    const r = await post(cap.base, "/", msg, PEER);
    if (r.status === 200) {
      // The hole: say what the model was handed, so a failure shows it.
      const id = JSON.parse(r.text).result?.task?.id;
      await until("the task ends", async () => {
        const t = await rpc(cap.base, "GetTask", { id });
        return /COMPLETED|FAILED/.test(t.result?.status?.state ?? "") ? true : undefined;
      });
      const seen = await until("the provider saw it", () => sentToModel(p, text));
      assert.fail(
        `a plain caller's peer task was taken (task ${id}); the model received: ${
          JSON.stringify(seen)
        } (${seen === text ? "unfenced and trusted" : "fenced"})`,
      );
    }
    assert.equal(r.status, 403);
    assert.equal(r.type, "application/json");
    assert.equal(r.text, REFUSAL);
    // Nothing was created and nothing reached the model.
    const list = await rpc(cap.base, "ListTasks", {});
    assert.equal(list.result.totalSize, 0);
    assert.equal(sentToModel(p, text), undefined);
  } finally {
    await cap.close();
    await p.close();
  }
});

Deno.test("peer trust: the refusal is the same bytes on every path, method and binding; without the peer header nothing changes", async () => {
  const p = fake();
  const cap = await capsule(p);
  try {
    const origin = { "x-murmur-task-origin": "PEER" }; // lowercased, as every origin is
    const rpcBody = (method: string, params: unknown) => ({
      jsonrpc: "2.0",
      id: 7,
      method,
      params,
    });
    const answers = [
      await post(cap.base, "/", rpcBody("SendMessage", userMessage("x")), origin),
      await post(cap.base, "/", rpcBody("SendStreamingMessage", userMessage("x")), origin),
      await post(cap.base, "/", rpcBody("GetTask", { id: "tsk_nope" }), origin),
      await post(cap.base, "/", rpcBody("murmur.StopSession", {}), origin),
      await post(cap.base, "/", "not json-rpc", origin),
      await post(cap.base, "/message:send", userMessage("x"), origin),
      await post(cap.base, "/message:stream", userMessage("x"), origin),
      await post(cap.base, "/no/such/path", {}, origin),
    ];
    for (const a of answers) {
      assert.deepEqual([a.status, a.type, a.text], [403, "application/json", REFUSAL]);
    }
    // The session was not stopped by the refused StopSession, and a task without the header is
    // taken (fenced as an event, as before).
    const text = `plain-${crypto.randomUUID()}`;
    assert.equal(await taskSeenByModel(cap, p, text, {}), fenced("task:event", text));
    // The card says the door takes no peer tasks.
    const card = await (await fetch(`${cap.base}/.well-known/agent-card.json`)).json();
    const door = card.capabilities.extensions.find((e: { uri: string }) => /door/.test(e.uri));
    assert.equal(door.params.peerTasks, false);
  } finally {
    await cap.close();
    await p.close();
  }
});

Deno.test("peer trust: accept: true takes a plain caller's peer task, in the peer lane, but fenced: the trust header alone is not honoured", async () => {
  const p = fake();
  const cap = await capsule(p, { exports: { peer_tasks: { accept: true } } });
  try {
    const text = `claimed-trusted-${crypto.randomUUID()}`;
    assert.equal(await taskSeenByModel(cap, p, text, PEER), fenced("task:peer", text));
    const trace = (await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    const start = trace.find((e) => e.event_type === "task_start" && e.origin === "peer");
    assert.equal(start?.lane, "peer");
    const card = await (await fetch(`${cap.base}/.well-known/agent-card.json`)).json();
    const door = card.capabilities.extensions.find((e: { uri: string }) => /door/.test(e.uri));
    assert.equal(door.params.peerTasks, true);
  } finally {
    await cap.close();
    await p.close();
  }
});

Deno.test("peer trust: on an authenticated door the token comes first; the operator token's trust claim is honoured, a declared credential's is not", async () => {
  const p = fake();
  const auth = {
    network: {
      authentication: {
        scheme: "bearer",
        credentials: { partner: { scopes: ["SendMessage", "GetTask"] } },
      },
    },
  };
  const refusing = await capsule(p, auth);
  try {
    const body = { jsonrpc: "2.0", id: 1, method: "SendMessage", params: userMessage("x") };
    const none = await post(refusing.base, "/", body, PEER);
    assert.equal(none.status, 401);
    assert.equal(JSON.parse(none.text).error, "unauthenticated");
    const bad = await post(refusing.base, "/", body, { ...PEER, authorization: "Bearer mdt1.x.y" });
    assert.equal(bad.status, 401);
    for (const name of ["operator", "partner"]) {
      const token = refusing.ready.tokens![name];
      const r = await post(refusing.base, "/", body, { ...PEER, authorization: `Bearer ${token}` });
      assert.deepEqual([r.status, r.text], [403, REFUSAL], name);
    }
  } finally {
    await refusing.close();
  }
  const accepting = await capsule(p, { ...auth, exports: { peer_tasks: { accept: true } } });
  try {
    const tokens = accepting.ready.tokens!;
    const a = `operator-claim-${crypto.randomUUID()}`;
    assert.equal(await taskSeenByModel(accepting, p, a, PEER, tokens.operator), a);
    const b = `partner-claim-${crypto.randomUUID()}`;
    assert.equal(
      await taskSeenByModel(accepting, p, b, PEER, tokens.partner),
      fenced("task:peer", b),
    );
  } finally {
    await accepting.close();
    await p.close();
  }
});

Deno.test("peer trust: a formation edge token for this member proves the peer: its trust claim is honoured, its untrusted claim fenced", async () => {
  const p = fake();
  const dir = await Deno.makeTempDir({ prefix: "mur-peer-" });
  const formationId = `frm_${crypto.randomUUID().replace(/-/g, "")}`;
  const key = crypto.getRandomValues(new Uint8Array(32));
  const b64 = btoa(String.fromCharCode(...key)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
  const doorFile = `${dir}/door.json`;
  await Deno.writeTextFile(
    doorFile,
    JSON.stringify({ formation_id: formationId, member: "coder", key: b64 }),
  );
  const cap = await capsule(p, { exports: { peer_tasks: { accept: true } } }, {
    MURMUR_FORMATION_ID: formationId,
    MURMUR_CREW_DOOR: doorFile,
  });
  try {
    const edge = await mintEdgeToken(key, formationId, "lead", "coder");
    const a = `lead-trusted-${crypto.randomUUID()}`;
    assert.equal(await taskSeenByModel(cap, p, a, PEER, edge), a);
    const b = `lead-untrusted-${crypto.randomUUID()}`;
    assert.equal(
      await taskSeenByModel(cap, p, b, { ...PEER, "x-murmur-task-trust": "untrusted" }, edge),
      fenced("task:peer", b),
    );
    // An edge token minted for another member is refused before consent is asked (403
    // not_permitted), and a forged one is 401: consent never reads an unproven caller.
    const other = await mintEdgeToken(key, formationId, "lead", "reviewer");
    const r = await post(cap.base, "/", {
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: userMessage("x"),
    }, { ...PEER, authorization: `Bearer ${other}` });
    assert.equal(r.status, 403);
    assert.equal(JSON.parse(r.text).error, "not_permitted");
  } finally {
    await cap.close();
    await p.close();
    await Deno.remove(dir, { recursive: true });
  }
});
