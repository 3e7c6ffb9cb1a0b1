/**
 * Door authentication (docs/door.md: authentication): the matrix of every method against no
 * token, malformed, forged, scope-less, scoped and operator tokens; the 401/403 bodies and
 * `www-authenticate` lines exactly; the gate runs before the body is read; tokens in the `--json`
 * line and the running record; the public vs extended card.
 */
import assert from "node:assert/strict";
import type { Capsule } from "../helpers/capsule.ts";
import {
  type Answer,
  call,
  capsule,
  CAPSULE_URI,
  DOOR_URI,
  message,
  portOf,
  post,
  rawRequest,
  rpcBody,
} from "./helpers.ts";
import { OPERATOR_METHODS as METHODS } from "../helpers/methods.ts";

const NAME = "guarded";

function authCapsule(): Promise<Capsule> {
  const credentials: Record<string, { scopes: string[] }> = { nobody: { scopes: [] } };
  METHODS.forEach((m, i) => (credentials[`only${i}`] = { scopes: [m] }));
  return capsule({
    name: NAME,
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 50 },
    network: { authentication: { scheme: "bearer", credentials } },
  });
}

const UNAUTHENTICATED = {
  error: "unauthenticated",
  message:
    "this door takes a token this capsule's runtime minted, as Authorization: Bearer <token>",
};
const INVALID = {
  error: "invalid_token",
  message: "the Authorization header does not present a token this session minted",
};

function assert401(a: { status: number; headers: Headers; json: unknown }, invalid: boolean) {
  assert.equal(a.status, 401);
  assert.equal(a.headers.get("content-type"), "application/json");
  assert.equal(
    a.headers.get("www-authenticate"),
    invalid ? `Bearer realm="${NAME}", error="invalid_token"` : `Bearer realm="${NAME}"`,
  );
  assert.deepEqual(a.json, invalid ? INVALID : UNAUTHENTICATED);
}

function assert403(a: Answer, credential: string, scope: string) {
  assert.equal(a.status, 403, a.text);
  assert.equal(a.headers.get("content-type"), "application/json");
  assert.equal(
    a.headers.get("www-authenticate"),
    `Bearer realm="${NAME}", error="insufficient_scope", scope="${scope}"`,
  );
  assert.deepEqual(a.json, {
    error: "insufficient_scope",
    message: `credential '${credential}' does not reach ${scope}`,
  });
}

/** Params that make each method do something observable (or a harmless refusal). */
function paramsFor(method: string, taskId: string) {
  switch (method) {
    case "SendMessage":
      return message("hello", {}, { returnImmediately: true });
    case "SendStreamingMessage":
      return message("hello stream");
    case "SubscribeToTask":
    case "GetTask":
    case "CancelTask":
      return { id: taskId };
    default:
      return {};
  }
}

/** Calls `method` with `authorization` (or none); reads a stream answer's head only. */
async function attempt(
  base: string,
  method: string,
  params: unknown,
  authorization?: string,
): Promise<Answer> {
  const ac = new AbortController();
  const res = await fetch(base + "/", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "a2a-version": "1.0",
      ...(authorization !== undefined ? { authorization } : {}),
    },
    body: rpcBody(method, params, "a"),
    signal: ac.signal,
  });
  if (res.headers.get("content-type") === "text/event-stream") {
    ac.abort();
    await res.body?.cancel().catch(() => {});
    return { status: res.status, headers: res.headers, text: "", json: { stream: true } };
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch { /* empty */ }
  return { status: res.status, headers: res.headers, text, json };
}

/** Admitted: not refused by the gate (a JSON-RPC answer or a stream). */
function assertAdmitted(a: Answer, method: string) {
  assert.equal(a.status, 200, `${method}: ${a.text}`);
  if (a.json?.stream) return;
  assert.equal(a.json?.jsonrpc, "2.0", `${method}: ${a.text}`);
  // The method itself answered (a result, or its own refusal such as -32001 / -32004).
  assert.ok(a.json.result !== undefined || a.json.error?.code < -32000, `${method}: ${a.text}`);
}

function forge(token: string, mutate: (payload: { credential: string; scopes: string[] }) => void) {
  const [tag, payload, mac] = token.split(".");
  const p = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
  mutate(p);
  const b64 = btoa(JSON.stringify(p)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return `${tag}.${b64}.${mac}`;
}

Deno.test("auth matrix: every method against no, malformed, forged, scope-less, scoped and operator tokens", async () => {
  const cap = await authCapsule();
  const other = await authCapsule();
  try {
    const tokens = cap.ready.tokens!;
    const op = tokens.operator;
    const live = await call(
      cap.base,
      "SendMessage",
      message("seed", {}, { returnImmediately: true }),
      {
        token: op,
      },
    );
    const taskId = live.json.result.task.id as string;
    const before = (await call(cap.base, "ListTasks", {}, { token: op })).json.result.totalSize;

    const malformed = [
      "",
      "Bearer",
      "Bearer ",
      `Basic ${btoa("a:b")}`,
      `Token ${op}`,
      `${op}`,
      `Bearer ${op} extra`,
      `Bearer ${op}x`,
      `Bearer mdt1.${op.split(".")[1]}`,
      `Bearer mdt2.${op.split(".").slice(1).join(".")}`,
      "Bearer mdt1..",
      "Bearer mdt1.!!!.???",
      `Bearer ${op}, Bearer ${op}`,
    ];
    const forged = [
      `Bearer ${other.ready.tokens!.operator}`, // minted by another session: another key
      `Bearer ${forge(tokens.nobody, (p) => (p.scopes = [...METHODS]))}`,
      `Bearer ${forge(tokens.only3, (p) => (p.credential = "operator"))}`,
      `Bearer ${op.slice(0, -2)}${op.endsWith("AA") ? "BB" : "AA"}`,
    ];
    for (const [i, method] of METHODS.entries()) {
      if (method === "murmur.StopSession") continue; // last, below: it changes the session
      const params = paramsFor(method, taskId);
      assert401(await attempt(cap.base, method, params), false);
      for (const h of malformed) assert401(await attempt(cap.base, method, params, h), true);
      for (const h of forged) assert401(await attempt(cap.base, method, params, h), true);
      assert403(
        await attempt(cap.base, method, params, `Bearer ${tokens.nobody}`),
        "nobody",
        method,
      );
      // Every other credential's single scope is not this one.
      const wrong = `only${(i + 1) % METHODS.length}`;
      assert403(await attempt(cap.base, method, params, `Bearer ${tokens[wrong]}`), wrong, method);
      assertAdmitted(
        await attempt(cap.base, method, params, `Bearer ${tokens[`only${i}`]}`),
        method,
      );
      assertAdmitted(await attempt(cap.base, method, params, `bearer ${op}`), method);
    }
    // Refusals changed nothing: only the admitted sends added tasks.
    const { json } = await call(cap.base, "ListTasks", {}, { token: op });
    assert.equal(
      json.result.totalSize,
      before + 4,
      "2 SendMessage + 2 SendStreamingMessage admitted",
    );

    // GetExtendedAgentCard needs a valid token and no scope.
    assert401(await attempt(cap.base, "GetExtendedAgentCard", undefined), false);
    assert401(await attempt(cap.base, "GetExtendedAgentCard", undefined, "Bearer nope"), true);
    for (const name of Object.keys(tokens)) {
      const a = await attempt(
        cap.base,
        "GetExtendedAgentCard",
        undefined,
        `Bearer ${tokens[name]}`,
      );
      assert.equal(a.json.result.capabilities.extendedAgentCard, true, name);
    }

    // Scope comes after -32009 and -32601: a scope-less token learns the envelope errors.
    const noVersion = await post(cap.base, rpcBody("GetTask", { id: taskId }, 2), {
      "content-type": "application/json",
      authorization: `Bearer ${tokens.nobody}`,
    });
    assert.equal(noVersion.json.error.code, -32009);
    const unknown = await call(cap.base, "tasks/get", { id: taskId }, { token: tokens.nobody });
    assert.equal(unknown.json.error.code, -32601);

    // murmur.StopSession last.
    const stop = "murmur.StopSession";
    assert401(await attempt(cap.base, stop, {}), false);
    for (const h of [...malformed, ...forged]) {
      assert401(await attempt(cap.base, stop, {}, h), true);
    }
    assert403(await attempt(cap.base, stop, {}, `Bearer ${tokens.nobody}`), "nobody", stop);
    assert403(await attempt(cap.base, stop, {}, `Bearer ${tokens.only0}`), "only0", stop);
    const slow = await call(
      cap.base,
      "SendMessage",
      message("slow", {}, { returnImmediately: true }),
      {
        token: op,
      },
    );
    const first = await attempt(cap.base, stop, {}, `Bearer ${tokens.only7}`);
    assert.deepEqual(first.json.result, {
      sessionId: cap.ready.session_id,
      canceled: [slow.json.result.task.id],
      residue: [],
    });
    const second = await attempt(cap.base, stop, {}, `Bearer ${op}`);
    assert.deepEqual(second.json.result.canceled, []);
  } finally {
    await cap.close();
    await other.close();
  }
});

Deno.test("auth gate runs before the body, path or method is read", async () => {
  const cap = await authCapsule();
  try {
    const port = portOf(cap);
    const head = (lines: string[]) =>
      ["POST / HTTP/1.1", `host: 127.0.0.1:${port}`, ...lines, "", ""].join("\r\n");
    // A declared body that never comes: the 401 arrives anyway (the body was not awaited; a
    // door that read it would never answer).
    const a = await rawRequest(
      port,
      head(["content-type: application/json", "content-length: 1000000", "a2a-version: 1.0"]),
      undefined,
      5_000,
    );
    assert.equal(a.status, 401);
    assert.deepEqual(a.headers.get("www-authenticate"), [`Bearer realm="${NAME}"`]);
    // Over the body cap, not JSON, unknown paths: 401 first, never 413 / 404 / -32700.
    const big = await rawRequest(
      port,
      head(["content-type: application/json", "content-length: 999999999"]),
      undefined,
      5_000,
    );
    assert.equal(big.status, 401);
    for (
      const [path, method, body, ctype] of [
        ["/", "POST", "{nope", "application/json"],
        ["/", "POST", "x", "text/plain"],
        ["/nowhere", "GET", null, ""],
        ["/", "OPTIONS", null, ""],
        [`/attachments/tsk_x/${"a".repeat(64)}`, "GET", null, ""],
        [`/attachments/tsk_x/${"a".repeat(64)}`, "POST", null, ""],
      ] as const
    ) {
      const r = await fetch(cap.base + path, {
        method,
        body,
        headers: ctype ? { "content-type": ctype } : {},
      });
      assert.equal(r.status, 401, `${method} ${path}`);
      assert.deepEqual(await r.json(), UNAUTHENTICATED);
      const bad = await fetch(cap.base + path, {
        method,
        body,
        headers: { ...(ctype ? { "content-type": ctype } : {}), authorization: "Bearer x" },
      });
      assert.equal(bad.status, 401);
      assert.deepEqual(await bad.json(), INVALID);
    }
    // Two Authorization lines, each valid on its own: invalid_token.
    const op = cap.ready.tokens!.operator;
    const body = rpcBody("ListTasks", {}, 1);
    const two = await rawRequest(
      port,
      head([
        "content-type: application/json",
        "a2a-version: 1.0",
        `content-length: ${body.length}`,
        `authorization: Bearer ${op}`,
        `Authorization: Bearer ${op}`,
      ]) + body,
    );
    assert.equal(two.status, 401);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(two.body)), INVALID);
    // Attachments need GetTask: a scope-less token gets 403, a GetTask token the route's 404.
    const att = `/attachments/tsk_x/${"a".repeat(64)}`;
    const noScope = await fetch(cap.base + att, {
      headers: { authorization: `Bearer ${cap.ready.tokens!.nobody}` },
    });
    assert.equal(noScope.status, 403);
    assert.equal(
      noScope.headers.get("www-authenticate"),
      `Bearer realm="${NAME}", error="insufficient_scope", scope="GetTask"`,
    );
    assert.deepEqual(await noScope.json(), {
      error: "insufficient_scope",
      message: "credential 'nobody' does not reach GetTask",
    });
    const scoped = await fetch(cap.base + att, {
      headers: { authorization: `Bearer ${cap.ready.tokens!.only3}` },
    });
    assert.equal(scoped.status, 404);
    await scoped.body?.cancel();
    const other = await fetch(cap.base + "/nowhere", {
      headers: { authorization: `Bearer ${op}` },
    });
    assert.equal(other.status, 404);
    await other.body?.cancel();
    // The card needs no token.
    const card = await fetch(cap.base + "/.well-known/agent-card.json");
    assert.equal(card.status, 200);
    await card.body?.cancel();
  } finally {
    await cap.close();
  }
});

Deno.test("tokens: operator and one per credential in the --json line and the 0600 running record; cards", async () => {
  const cap = await authCapsule();
  try {
    const tokens = cap.ready.tokens!;
    assert.deepEqual(
      Object.keys(tokens),
      ["operator", "nobody", ...METHODS.map((_, i) => `only${i}`)].sort((a, b) =>
        a === "operator" ? -1 : b === "operator" ? 1 : a.localeCompare(b)
      ),
    );
    for (const [name, t] of Object.entries(tokens)) {
      const [tag, payload, mac] = t.split(".");
      assert.equal(tag, "mdt1");
      assert.match(payload, /^[A-Za-z0-9_-]+$/);
      assert.match(mac, /^[A-Za-z0-9_-]{43}$/);
      const p = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
      assert.equal(p.credential, name);
      if (name === "operator") assert.deepEqual(p.scopes, [...METHODS]);
      else if (name === "nobody") assert.deepEqual(p.scopes, []);
      else assert.deepEqual(p.scopes, [METHODS[Number(name.slice(4))]]);
    }
    const path = `${cap.home}/running/${cap.ready.session_id}.json`;
    const rec = JSON.parse(await Deno.readTextFile(path));
    assert.deepEqual(rec.tokens, tokens);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);

    // Public card of an authenticated door: no capsule extension; the extended card has it.
    const card = await (await fetch(cap.base + "/.well-known/agent-card.json")).json();
    assert.deepEqual(card.capabilities.extensions.map((e: { uri: string }) => e.uri), [
      DOOR_URI,
      "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1",
      // A running task can be steered (docs/approvals.md "Steering").
      "https://docs.murmur.nexus/reference/agent-card/#murmur-steer-v1",
    ]);
    assert.equal(card.capabilities.extendedAgentCard, true);
    assert.deepEqual(card.securityRequirements, [{ schemes: { bearer: { list: [] } } }]);
    assert.equal(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme, "Bearer");
    assert.deepEqual(card.skills[0].securityRequirements, [
      { schemes: { bearer: { list: ["SendMessage"] } } },
      { schemes: { bearer: { list: ["SendStreamingMessage"] } } },
    ]);
    assert.deepEqual(card.capabilities.extensions[0].params.methods, [
      ...METHODS,
      "murmur.PollSession", // reached by the murmur.WatchSession scope: not in the matrix above
      "GetExtendedAgentCard",
    ]);
    const ext = await call(cap.base, "GetExtendedAgentCard", undefined, { token: tokens.nobody });
    const x = ext.json.result;
    assert.deepEqual(x.capabilities.extensions.map((e: { uri: string }) => e.uri), [
      DOOR_URI,
      CAPSULE_URI,
      "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1",
      "https://docs.murmur.nexus/reference/agent-card/#murmur-steer-v1",
    ]);
    assert.equal(x.capabilities.extensions[1].params.sessionId, cap.ready.session_id);
    for (const k of ["url", "preferredTransport", "security", "protocolVersion"]) {
      assert.equal(k in x, false, k);
    }
    assert.equal(x.supportedInterfaces[0].protocolVersion, "1.0");
  } finally {
    await cap.close();
  }
});
