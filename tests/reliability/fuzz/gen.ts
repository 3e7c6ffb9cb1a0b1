/**
 * The fuzzer's generator: a valid request made from each method's params, then broken — wrong
 * types at any key, keys removed and added, huge strings and ids, deep nesting, invalid UTF-8,
 * truncated bodies, lying framing, wrong and duplicate headers. Deterministic in its `Rand`.
 */
import { CARD_METHODS, PUSH_METHODS } from "../../helpers/methods.ts";
import { chance, int, logSize, pick, type Rand } from "../helpers/rand.ts";
import { BODY_CAP, type Case, type Door, DOOR_URI, type Expect, expected } from "./oracle.ts";
import { isRestTarget, restExpected } from "./rest_oracle.ts";
import { toRest } from "./rest_gen.ts";

const enc = new TextEncoder();
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const METHODS: string[] = [...CARD_METHODS, "GetExtendedAgentCard", ...PUSH_METHODS];
const OTHER_METHODS = [
  "message/send",
  "tasks/get",
  "tasks/cancel",
  "stream/watch",
  "session/stop",
  "",
  "getTask",
  "SendMessage ",
  "murmur.",
  "\u0000",
  "SendMessage\u200b",
];
const STATES = [
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_AUTH_REQUIRED",
  "working",
  "TASK_STATE_working",
];
const KEYS = [
  "taskId",
  "task_id",
  "contextId",
  "context_id",
  "messageId",
  "message_id",
  "referenceTaskIds",
  "text",
  "raw",
  "url",
  "data",
  "mediaType",
  "filename",
  "metadata",
  "configuration",
  "returnImmediately",
  "return_immediately",
  "id",
  "pageSize",
  "page_size",
  "pageToken",
  "status",
  "historyLength",
  "includeArtifacts",
  "statusTimestampAfter",
  "taskPushNotificationConfig",
  "url",
  "token",
  "authentication",
  "scheme",
  "credentials",
  "__proto__",
  "constructor",
  "toString",
  "",
  "\u0000",
  "ключ",
  "🔑",
  "a".repeat(300),
];

/** Markers replaced by raw JSON text after serialization (deep nesting cannot be stringified). */
const RAW_PREFIX = "\u0000raw:";

function hex(r: Rand, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += "0123456789abcdef"[int(r, 0, 15)];
  return s;
}

function weirdString(r: Rand): string {
  return pick(r, [
    "",
    " ",
    "x",
    "\u0000",
    "\ud800",
    "\udfff\ud800",
    "🦀🔥",
    "\u202eRTL",
    "line\nbreak\r\n",
    '"quoted\\',
    "<script>",
    "%00%2F..%2f",
    "../../etc/passwd",
    "1.0",
    "ROLE_USER",
    "null",
    "tsk_" + "0".repeat(32),
  ]);
}

function anyValue(r: Rand, depth = 0): Json {
  switch (int(r, 0, 13)) {
    case 0:
      return null;
    case 1:
      return chance(r, 0.5);
    case 2:
      return int(r, -5, 200);
    case 3:
      return pick(r, [1.5, -0, 1e308, -1e-308, 2 ** 53 + 2, -(2 ** 31) - 1, 2 ** 31, 0.1]);
    case 4:
    case 5:
      return weirdString(r);
    case 6:
      return hex(r, int(r, 1, 40));
    case 7:
      return depth > 2 ? [] : Array.from({ length: int(r, 0, 3) }, () => anyValue(r, depth + 1));
    case 8: {
      if (depth > 2) return {};
      const o: Obj = {};
      for (let i = int(r, 0, 3); i > 0; i--) put(o, pick(r, KEYS), anyValue(r, depth + 1));
      return o;
    }
    case 9:
      return pick(r, STATES);
    case 10:
      return pick(r, [
        "2026-10-13T09:00:00.123Z",
        "2026-10-13",
        "2026-13-45T99:00:00Z",
        "yesterday",
      ]);
    case 11:
      return String(int(r, -3, 150));
    case 12:
      return pick(r, ["ROLE_USER", "ROLE_AGENT", "user"]);
    default:
      return { text: "x" };
  }
}

/** Sets an own property, `__proto__` included (as JSON.parse would make it). */
function put(o: Obj, key: string, value: Json): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A different JSON type than `v` has. */
function wrongType(r: Rand, v: Json): Json {
  for (let i = 0; i < 20; i++) {
    const w = anyValue(r);
    if (typeOf(w) !== typeOf(v)) return w;
  }
  return typeOf(v) === "string" ? 0 : "0";
}

function typeOf(v: Json): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

export interface Ids {
  held: string;
  unknown: () => string;
}

function part(r: Rand): Obj {
  switch (int(r, 0, 9)) {
    case 0:
      return { data: { city: "Paris", n: [1, 2, { deep: true }] }, mediaType: "application/json" };
    case 1:
      return { text: "see attached", mediaType: "text/plain", filename: "a.txt" };
    case 2:
      return pick<Obj>(r, [{ raw: "aGVsbG8=", mediaType: "image/png" }, {
        url: "https://x/y.png",
      }]);
    case 3:
      return { data: null };
    default:
      return { text: pick(r, ["hello", "Summarise README.md", "", "ünïcødé 🦀"]) };
  }
}

/** Receiver URLs: refused ranges, public literals, odd schemes and shapes, a host only DNS knows. */
const PUSH_URLS = [
  "http://127.0.0.1:9/hook",
  "http://10.0.0.1/hook",
  "http://[::1]/hook",
  "http://localhost:8080/hook",
  "http://169.254.169.254/latest/meta-data",
  "http://0.0.0.0/",
  "https://192.168.1.1/x",
  "https://203.0.113.9/hook",
  "http://[2001:db8::1]:8443/h",
  "ftp://203.0.113.9/x",
  "http://u:p@203.0.113.9/",
  "hooks.example.com/x",
  "https://hooks.example.com/x",
  "",
  "not a url",
];

/** A TaskPushNotificationConfig, mostly well-formed (the mutations break it). */
function pushConfig(r: Rand, ids: Ids, inline: boolean): Obj {
  const c: Obj = { url: pick(r, PUSH_URLS) };
  if (!inline) c[chance(r, 0.5) ? "task_id" : "taskId"] = pick(r, [ids.held, ids.unknown(), ""]);
  else if (chance(r, 0.2)) c.taskId = pick(r, ["", ids.held]);
  if (chance(r, 0.5)) c.id = pick(r, ["tck-push-01", "", "a b", "x".repeat(129), "é"]);
  if (chance(r, 0.3)) c.token = pick(r, ["t0k", "", "line\nbreak", "ü"]);
  if (chance(r, 0.3)) {
    c.authentication = pick<Json>(r, [
      { scheme: "Bearer", credentials: "abc" },
      { scheme: "Bearer" },
      { scheme: "Bad Scheme", credentials: "x" },
      { credentials: "x" },
      { scheme: "Basic", credentials: "a\r\nb" },
    ]);
  }
  return c;
}

function paramsFor(r: Rand, method: string, ids: Ids): Obj {
  switch (method) {
    case "SendMessage":
    case "SendStreamingMessage": {
      const message: Obj = {
        messageId: `m-${hex(r, 8)}`,
        role: "ROLE_USER",
        parts: Array.from({ length: int(r, 1, 3) }, () => part(r)),
      };
      if (chance(r, 0.3)) message.contextId = `ctx_${hex(r, 32)}`;
      if (chance(r, 0.25)) message.taskId = pick(r, [ids.held, ids.unknown(), ""]);
      if (chance(r, 0.15)) message.referenceTaskIds = [ids.held, ids.unknown()];
      if (chance(r, 0.15)) message.metadata = { [DOOR_URI]: { forgetSession: chance(r, 0.5) } };
      const p: Obj = { message };
      if (chance(r, 0.3)) p.configuration = { returnImmediately: chance(r, 0.5) };
      if (chance(r, 0.2)) {
        p.configuration = {
          ...(p.configuration as Obj | undefined),
          taskPushNotificationConfig: pushConfig(r, ids, true),
        };
      }
      return p;
    }
    case "CreateTaskPushNotificationConfig":
      return pushConfig(r, ids, false);
    case "GetTaskPushNotificationConfig":
    case "DeleteTaskPushNotificationConfig":
      return {
        [chance(r, 0.5) ? "task_id" : "taskId"]: pick(r, [ids.held, ids.held, ids.unknown(), ""]),
        id: pick<Json>(r, ["tck-push-01", "", 7]),
      };
    case "ListTaskPushNotificationConfigs": {
      const p: Obj = { taskId: pick(r, [ids.held, ids.held, ids.unknown()]) };
      if (chance(r, 0.3)) p.pageSize = pick(r, INT_EDGES);
      if (chance(r, 0.3)) p.pageToken = pick<Json>(r, ["", "abc", 5]);
      return p;
    }
    case "GetTask": {
      const p: Obj = { id: pick(r, [ids.held, ids.held, ids.unknown(), ""]) };
      if (chance(r, 0.3)) p.historyLength = int(r, 0, 10);
      return p;
    }
    case "CancelTask":
      return { id: ids.unknown() };
    case "SubscribeToTask":
      return { id: pick(r, [ids.held, ids.unknown()]) };
    case "ListTasks": {
      const p: Obj = {};
      const snake = chance(r, 0.3);
      const k = (camel: string) =>
        snake ? camel.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase()) : camel;
      if (chance(r, 0.3)) p[k("contextId")] = `ctx_${hex(r, 32)}`;
      if (chance(r, 0.3)) p.status = chance(r, 0.7) ? pick(r, STATES.slice(0, 8)) : int(r, 0, 8);
      if (chance(r, 0.4)) p[k("pageSize")] = chance(r, 0.7) ? int(r, 1, 100) : pick(r, INT_EDGES);
      if (chance(r, 0.2)) p[k("pageToken")] = pick(r, ["", "", "e30", "WzEsInRza194Il0", "!!"]);
      if (chance(r, 0.2)) {
        p[k("historyLength")] = chance(r, 0.5) ? int(r, 0, 5) : pick(r, INT_EDGES);
      }
      if (chance(r, 0.2)) p[k("statusTimestampAfter")] = "2020-01-01T00:00:00.000Z";
      if (chance(r, 0.3)) p[k("includeArtifacts")] = chance(r, 0.5);
      return p;
    }
    case "murmur.PollSession": {
      // waitSecs only 0 or refused values: a valid wait at the last id would hold the case.
      const p: Obj = {};
      if (chance(r, 0.6)) p.cursor = chance(r, 0.6) ? int(r, 0, 40) : pick(r, INT_EDGES);
      if (chance(r, 0.4)) p.waitSecs = pick(r, [0, "0", 31, -1, 1.5, "x", null]);
      if (chance(r, 0.4)) p.maxEvents = chance(r, 0.5) ? int(r, 1, 512) : pick(r, INT_EDGES);
      return p;
    }
    default:
      return {};
  }
}

/** ProtoJSON int32 edges: in range, out of range, as strings, not integers. */
const INT_EDGES: Json[] = [
  0,
  1,
  100,
  101,
  -1,
  "7",
  "100",
  "101",
  " 5",
  "1e2",
  "0x10",
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  "2147483647",
  "2147483648",
  "9999999999",
  1e308,
  1.0,
  1.5,
  "1.5",
  "",
];

type Path = (string | number)[];

function paths(v: Json, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  }
  return out;
}

function getAt(root: Json, p: Path): Json {
  let v: Json = root;
  for (const k of p) v = (v as Record<string | number, Json>)[k];
  return v;
}

function setAt(root: Obj, p: Path, value: Json | undefined): void {
  const parent = getAt(root, p.slice(0, -1)) as Record<string | number, Json>;
  const k = p[p.length - 1];
  if (value === undefined) {
    if (Array.isArray(parent)) parent.splice(k as number, 1);
    else delete parent[k];
  } else parent[k] = value;
}

interface Raws {
  list: string[];
}

function rawMarker(raws: Raws, text: string): string {
  raws.list.push(text);
  return `${RAW_PREFIX}${raws.list.length - 1}`;
}

function deep(r: Rand): string {
  // Around the door's limit of 512 levels, and now and then millions deep (a stall, unguarded).
  const depth = chance(r, 0.02)
    ? int(r, 200_000, 2_000_000)
    : chance(r, 0.3)
    ? int(r, 500, 520)
    : logSize(r, 2, 14);
  const [open, close] = chance(r, 0.5) ? ["[", "]"] : ['{"a":', "}"];
  return open.repeat(depth) + (open === "[" ? "" : "1") + close.repeat(depth);
}

function huge(r: Rand): string {
  const n = chance(r, 0.03) ? int(r, BODY_CAP - 64, BODY_CAP + 64) : logSize(r, 10, 20);
  return pick(r, ["a", "é", "🦀", "\\u0000"]).repeat(Math.max(1, Math.floor(n / 4)));
}

/** One structural mutation of the envelope tree (params included). */
function mutateTree(r: Rand, env: Obj, raws: Raws): string {
  const all = paths(env).filter((p) => p.length > 0);
  // Mostly inside params: the envelope's own keys are few and refused early.
  const inParams = all.filter((p) => p[0] === "params");
  const target = pick(r, inParams.length && chance(r, 0.8) ? inParams : all);
  const v = getAt(env, target);
  switch (int(r, 0, 7)) {
    case 0:
    case 1:
      setAt(env, target, wrongType(r, v));
      return `wrong type at ${target.join(".")}`;
    case 2:
      setAt(env, target, undefined);
      return `removed ${target.join(".")}`;
    case 3: {
      const objs = paths(env).filter((p) => {
        const x = getAt(env, p);
        return x !== null && typeof x === "object" && !Array.isArray(x);
      });
      const at = pick(r, objs);
      const key = pick(r, KEYS);
      put(getAt(env, at) as Obj, key, anyValue(r));
      return `extra key ${key} at ${at.join(".") || "<root>"}`;
    }
    case 4:
      setAt(env, target, rawMarker(raws, JSON.stringify(huge(r)).replace(/\\\\u0000/g, "\\u0000")));
      return `huge string at ${target.join(".")}`;
    case 5:
      setAt(env, target, rawMarker(raws, deep(r)));
      return `deep nesting at ${target.join(".")}`;
    case 6:
      setAt(env, target, null);
      return `null at ${target.join(".")}`;
    default:
      setAt(env, target, Array.isArray(v) ? { 0: v[0] ?? null } : [v]);
      return `array/object swap at ${target.join(".")}`;
  }
}

function serialize(env: Obj, raws: Raws): Uint8Array {
  let text = JSON.stringify(env);
  // JSON.stringify writes the marker's NUL as \u0000; swap each quoted marker for its raw text.
  text = text.replace(/"\\u0000raw:(\d+)"/g, (_m, i) => raws.list[Number(i)]);
  return enc.encode(text);
}

const INVALID_UTF8 = [[0xff], [0xc0, 0x80], [0x80], [0xed, 0xa0, 0x80], [
  0xf8,
  0x88,
  0x80,
  0x80,
  0x80,
], [0xe2, 0x82]];

function mutateBytes(r: Rand, body: Uint8Array): [Uint8Array, string] {
  switch (int(r, 0, 6)) {
    case 0: {
      const cut = int(r, 0, Math.max(0, body.length - 2));
      return [body.slice(0, cut), `truncated at ${cut}`];
    }
    case 1: {
      const bad = pick(r, INVALID_UTF8);
      // Inside a string when possible: after the first quote past a random point.
      const at = int(r, 0, body.length);
      const out = new Uint8Array(body.length + bad.length);
      out.set(body.subarray(0, at));
      out.set(bad, at);
      out.set(body.subarray(at), at + bad.length);
      return [out, `invalid UTF-8 ${bad.map((b) => b.toString(16)).join(" ")} at ${at}`];
    }
    case 2:
      return [
        concat(body, enc.encode(pick(r, ["}", ",", " garbage", "\u0000", "{}", "\n"]))),
        "trailing bytes",
      ];
    case 3:
      return [concat(new Uint8Array([0xef, 0xbb, 0xbf]), body), "BOM"];
    case 4:
      return [
        enc.encode(pick(r, ["null", "[]", "[{}]", "1", '"x"', "true", "{}", "{", "\u0000", " "])),
        "other JSON",
      ];
    case 5:
      return [crypto.getRandomValues(new Uint8Array(int(r, 1, 64))), "random bytes"];
    default:
      return [concat(enc.encode(" \n\t "), body), "leading whitespace"];
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function headerMutation(r: Rand, h: [string, string][], door: Door): string {
  const set = (name: string, values: string[]) => {
    for (let i = h.length - 1; i >= 0; i--) if (h[i][0].toLowerCase() === name) h.splice(i, 1);
    for (const v of values) h.push([pick(r, [name, name.toUpperCase(), cap(name)]), v]);
  };
  const op = door.tokens ? int(r, 0, 4) : int(r, 0, 3);
  switch (op) {
    case 0: {
      const v = pick(r, [
        [],
        [""],
        ["0.3"],
        ["1"],
        ["1.1"],
        ["2.0"],
        ["1.0x"],
        ["1.0", "1.0"],
        ["1.0, 1.0"],
        [" 1.0 "],
        ["1.0.7"],
        ["1.0.x"],
        ["\xff"],
      ]);
      set("a2a-version", v);
      return `A2A-Version ${JSON.stringify(v)}`;
    }
    case 1: {
      const v = pick(r, [
        [],
        ["text/plain"],
        ["application/json; charset=utf-8"],
        ["APPLICATION/JSON"],
        ["application/json", "application/json"],
        ["text/plain", "application/json"],
        ["application/jsonx"],
        [""],
        ["multipart/form-data"],
      ]);
      set("content-type", v);
      return `Content-Type ${JSON.stringify(v)}`;
    }
    case 2: {
      const name = pick(r, [
        "x-murmur-task-origin",
        "x-murmur-task-trust",
        "last-event-id",
        "a2a-extensions",
        "traceparent",
        "x-junk",
      ]);
      h.push([
        name,
        pick(r, [
          "peer",
          "completion",
          "trusted",
          "-1",
          "999999999999999999999",
          "\xff\xfe",
          "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1",
          "a".repeat(int(r, 1, 8000)),
        ]),
      ]);
      return `extra header ${name}`;
    }
    case 3:
      h.push(["X-Many", "v".repeat(int(r, 1, 4000))]);
      for (let i = int(r, 0, 60); i > 0; i--) h.push([`X-H${i}`, String(i)]);
      return "many headers";
    default: {
      const op = door.tokens!.operator;
      const forged = op.slice(0, -2) + (op.endsWith("A") ? "BB" : "AA");
      const v = pick(r, [
        [],
        [`Bearer ${op}`, `Bearer ${op}`],
        [`Basic ${op}`],
        ["Bearer"],
        [`Bearer ${forged}`],
        [`bearer ${op}`],
        [`Bearer   ${op}`],
        [`Bearer ${op} extra`],
        [`Bearer ${door.tokens!.watcher}`],
        [`Bearer ${door.tokens!.watcher}`],
        [`Bearer mdt1.${"e30"}.${"A".repeat(43)}`],
        ["Bearer \xff\xfe"],
        [`Bearer ${op}`, `Bearer ${door.tokens!.watcher}`],
      ]);
      set("authorization", v);
      return `Authorization ${v.length} line(s)`;
    }
  }
}

function cap(name: string): string {
  return name.replace(/(^|-)([a-z0-9])/g, (_m, d, c) => d + c.toUpperCase());
}

export interface Generated {
  c: Case;
  expect: Expect;
  /** What was broken, for the failure message. */
  notes: string[];
  id: number;
}

/** One fuzz case: retried until the oracle calls it safe to send. */
export function generate(r: Rand, door: Door, ids: Ids, caseId: number): Generated {
  for (let attempt = 0; attempt < 50; attempt++) {
    const g = draw(r, door, ids, caseId);
    if (g.expect.kind !== "unsafe") return g;
  }
  throw new Error("fuzz: 50 draws in a row were unsafe to send");
}

function draw(r: Rand, door: Door, ids: Ids, caseId: number): Generated {
  const notes: string[] = [];
  const method = chance(r, 0.05) ? pick(r, OTHER_METHODS) : pick(r, METHODS);
  const raws: Raws = { list: [] };
  const env: Obj = { jsonrpc: "2.0", id: pick(r, [caseId, `r-${caseId}`]), method };
  if (!chance(r, 0.1)) env.params = paramsFor(r, method, ids);
  const stop = method === "murmur.StopSession";
  const nTree = chance(r, 0.15) ? 0 : int(r, 1, 3);
  for (let i = 0; i < nTree; i++) notes.push(mutateTree(r, env, raws));
  let body = serialize(env, raws);
  if (chance(r, 0.12)) {
    const [b, note] = mutateBytes(r, body);
    body = b;
    notes.push(note);
  }
  const headers: [string, string][] = [["Content-Type", "application/json"], [
    "A2A-Version",
    "1.0",
  ]];
  if (door.tokens) headers.push(["Authorization", `Bearer ${door.tokens.operator}`]);
  if (chance(r, stop ? 0.9 : 0.2)) notes.push(headerMutation(r, headers, door));
  const c: Case = { method: "POST", target: "/", headers, body };
  if (chance(r, 0.03)) {
    c.method = pick(r, ["GET", "PUT", "DELETE", "OPTIONS", "PATCH", "POST", "GET"]);
    c.target = pick(r, [
      "/",
      "/x",
      "/?a=1",
      "//",
      "/attachments/tsk_x/" + "a".repeat(64),
      "/.well-known/agent-card.json",
      "/.well-known/agent-card.json?x",
      "/index.html",
    ]);
    notes.push(`${c.method} ${c.target}`);
  }
  // A third of the cases go to the HTTP+JSON binding instead (rest_gen.ts).
  if (chance(r, 0.35)) {
    let params = env.params === undefined ? new Uint8Array() : serialize({ p: env.params }, raws);
    if (env.params !== undefined) params = params.subarray(5, params.length - 1); // {"p":…}
    if (chance(r, 0.12) && params.length) {
      const [b, note] = mutateBytes(r, params);
      params = b;
      notes.push(note);
    }
    notes.push(toRest(r, c, method, env.params, params, ids.held));
    body = c.body;
  }
  if (chance(r, 0.04)) {
    switch (int(r, 0, 4)) {
      case 0:
        c.chunked = true;
        notes.push("chunked body");
        break;
      case 1:
        c.contentLength = int(r, 0, body.length);
        notes.push(`Content-Length ${c.contentLength} of ${body.length}`);
        break;
      case 2:
        c.contentLength = body.length + int(r, 1, 1000);
        c.truncatedOnWire = true;
        notes.push(`body cut on the wire: ${body.length} of ${c.contentLength}`);
        break;
      case 3:
        c.conflictingLength = true;
        notes.push("two Content-Length lines");
        break;
      default:
        c.contentLength = BODY_CAP + int(r, 1, 1 << 30);
        notes.push(`declared ${c.contentLength} bytes, sent ${body.length}`);
    }
  }
  const expect = isRestTarget(c.target) ? restExpected(c, door) : expected(c, door);
  return { c, expect, notes, id: caseId };
}
