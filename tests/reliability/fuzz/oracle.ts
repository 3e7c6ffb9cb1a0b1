/**
 * What the door must answer to one request, written from the rules (seed 000 "Endpoints",
 * door-facts §1, §3–§8, contract §5), not from the door's code: the fuzzer compares every answer
 * with this. It reads the request exactly as it goes on the wire (header lines, raw body bytes).
 */
import { CARD_METHODS, PUSH_METHODS as PUSH } from "../../helpers/methods.ts";

export const BODY_CAP = 8 * 1024 * 1024;
export const MAX_DEPTH = 512;
export const DOOR_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1";

export type RpcId = string | number | null;

export type Expect =
  | { kind: "http"; status: 400 | 401 | 403 | 404 | 405 | 413; error?: string }
  | { kind: "rpc-error"; id: RpcId; code: number }
  | {
    kind: "rpc-result";
    id: RpcId;
    what: "task" | "rejected" | "list" | "card" | "poll" | "push-list" | "push-deleted";
  }
  | { kind: "stream"; id: RpcId; what: "rejected" | "subscribe" | "watch" }
  | { kind: "card" }
  /** HTTP+JSON (rest_oracle.ts): a Status refusal, with its ErrorInfo reason when it has one. */
  | { kind: "rest-error"; status: number; reason: string | null; allow?: string[] }
  | {
    kind: "rest-result";
    what: "task" | "rejected" | "list" | "card" | "poll" | "push-list" | "push-deleted";
  }
  | { kind: "rest-stream"; what: "rejected" | "subscribe" | "watch" }
  /** A request that would change the session (cancel the held task, stop): never sent. */
  | { kind: "unsafe" };

/** One request as the fuzzer sends it. */
export interface Case {
  method: string;
  target: string;
  /** Header lines in order, duplicates allowed (Host, Connection, Content-Length are added). */
  headers: [string, string][];
  body: Uint8Array;
  /** Content-Length sent (default: the body's length); the door reads this many bytes. */
  contentLength?: number;
  /** The body is sent chunked instead of with Content-Length. */
  chunked?: boolean;
  /** Fewer bytes than Content-Length are sent, then the write side closes. */
  truncatedOnWire?: boolean;
  /** Two Content-Length lines that disagree. */
  conflictingLength?: boolean;
}

/** What the oracle knows about the door under test. */
export interface Door {
  /** credential name → token; null on a public door. */
  tokens: Record<string, string> | null;
  /** credential name → its scopes (operator: every method). */
  scopes: Record<string, string[]>;
  taskAcceptance: "none" | "single";
  /** The one task the session holds (WORKING the whole run). */
  heldTask: string;
  /** `network.push_notifications.enabled` (allow_private false). */
  push: boolean;
}

const BASE_METHODS: string[] = [...CARD_METHODS];

/** A2A's push-config methods: `-32003` unless the manifest turns push on (README). */
export const PUSH_METHODS: string[] = [...PUSH];

const STATES = [
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED",
];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const err = (id: RpcId, code: number): Expect => ({ kind: "rpc-error", id, code });

function lines(c: Case, name: string): string[] {
  return c.headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v.trim());
}

export function expected(c: Case, door: Door): Expect {
  // Broken framing: hyper refuses two Content-Lengths itself, before the door sees anything.
  if (c.conflictingLength) return { kind: "http", status: 400 };

  const path = c.target;
  if (path === "/.well-known/agent-card.json" && c.method === "GET") return { kind: "card" };

  // The token gate, before path, body or method (door-facts §7).
  let scopes: Set<string> | null = null;
  if (door.tokens) {
    const auth = lines(c, "authorization");
    if (auth.length === 0) return { kind: "http", status: 401, error: "unauthenticated" };
    const m = auth.length === 1 ? /^bearer\s+(\S+)$/i.exec(auth[0]) : null;
    const name = m ? Object.keys(door.tokens).find((n) => door.tokens![n] === m[1]) : undefined;
    if (name === undefined) return { kind: "http", status: 401, error: "invalid_token" };
    scopes = new Set(door.scopes[name]);
  }
  // Peer consent, right after the gate on every path (docs/door.md "Peer tasks and trust"): no
  // fuzzed manifest says exports.peer_tasks.accept. Two origin lines read as one "peer, peer".
  const origin = lines(c, "x-murmur-task-origin");
  if (origin.length === 1 && origin[0].toLowerCase() === "peer") {
    return { kind: "http", status: 403, error: "peer_not_accepted" };
  }

  if (path.startsWith("/attachments/")) {
    if (c.method !== "GET") return { kind: "http", status: 405 };
    if (scopes && !scopes.has("GetTask")) {
      return { kind: "http", status: 403, error: "insufficient_scope" };
    }
    return { kind: "http", status: 404 }; // no task of this session returned an image
  }
  if (path !== "/" || c.method !== "POST") return { kind: "http", status: 404 };
  const ctype = lines(c, "content-type").join(", ").toLowerCase();
  if (!ctype.includes("application/json")) return { kind: "http", status: 404 };

  const n = c.contentLength ?? c.body.length;
  if (n > BODY_CAP) return { kind: "http", status: 413 };
  if (n === 0) return { kind: "http", status: 404 };
  // A body that never completes is the client's fault (400), not the door's (500).
  if (c.truncatedOnWire) return { kind: "http", status: 400 };
  const bytes = c.body.subarray(0, n);

  let value: unknown;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    // The door parses no JSON nested deeper than 512 levels (a depth limit RFC 8259 §9 allows).
    if (depthOf(bytes) > MAX_DEPTH) return err(null, -32700);
    value = JSON.parse(text);
  } catch {
    return err(null, -32700);
  }
  if (!isObj(value)) return err(null, -32600);
  const validId = typeof value.id === "string" ||
    (typeof value.id === "number" && Number.isSafeInteger(value.id));
  const id: RpcId = validId ? value.id as string | number : null;
  if (value.jsonrpc !== "2.0" || typeof value.method !== "string" || !validId) {
    return err(id, -32600);
  }
  const versions = lines(c, "a2a-version");
  if (versions.length !== 1 || !/^1\.0(\.\d+)?$/.test(versions[0])) return err(id, -32009);

  const method = value.method;
  const methods = [
    ...BASE_METHODS,
    ...(door.push ? PUSH_METHODS : []),
    ...(door.tokens ? ["GetExtendedAgentCard"] : []),
  ];
  if (!methods.includes(method)) {
    if (PUSH_METHODS.includes(method)) return err(id, -32003);
    return err(id, method === "GetExtendedAgentCard" ? -32004 : -32601);
  }
  // A long poll reads what a watch reads, with its scope (docs/protocol.md "Long poll"); a push
  // config is a task's subscription delivered by POST (docs/push.md).
  const scope = method === "murmur.PollSession"
    ? "murmur.WatchSession"
    : PUSH_METHODS.includes(method)
    ? "SubscribeToTask"
    : method;
  if (scopes && method !== "GetExtendedAgentCard" && !scopes.has(scope)) {
    return { kind: "http", status: 403, error: "insufficient_scope" };
  }
  if ("params" in value && !isObj(value.params)) return err(id, -32602);
  const params = (value.params ?? {}) as Obj;
  return methodAnswer(method, params, id, door);
}

/** The method's own answer to params that passed the binding's checks (both bindings). */
export function methodAnswer(method: string, p: Obj, id: RpcId, door: Door): Expect {
  switch (method) {
    case "SendMessage":
    case "SendStreamingMessage":
      return sendAnswer(method === "SendStreamingMessage", p, id, door);
    case "GetTask": {
      if (typeof p.id !== "string" || p.id === "") return err(id, -32602);
      if (!historyValid(field(p, "historyLength"))) return err(id, -32602);
      return p.id === door.heldTask ? { kind: "rpc-result", id, what: "task" } : err(id, -32001);
    }
    case "CancelTask": {
      if (typeof p.id !== "string") return err(id, -32602);
      return p.id === door.heldTask ? { kind: "unsafe" } : err(id, -32001);
    }
    case "SubscribeToTask": {
      if (typeof p.id !== "string" || p.id === "") return err(id, -32602);
      if (door.taskAcceptance === "none") return err(id, -32004);
      return p.id === door.heldTask ? { kind: "stream", id, what: "subscribe" } : err(id, -32001);
    }
    case "ListTasks":
      return listTasksValid(p) ? { kind: "rpc-result", id, what: "list" } : err(id, -32602);
    case "murmur.WatchSession":
      return { kind: "stream", id, what: "watch" };
    case "murmur.StopSession":
      return { kind: "unsafe" };
    case "murmur.PollSession": {
      const ok = pollInt(field(p, "cursor"), 0, Number.MAX_SAFE_INTEGER) &&
        pollInt(field(p, "waitSecs"), 0, 30) && pollInt(field(p, "maxEvents"), 1, 512);
      return ok ? { kind: "rpc-result", id, what: "poll" } : err(id, -32602);
    }
    case "GetExtendedAgentCard":
      return { kind: "rpc-result", id, what: "card" };
    case "CreateTaskPushNotificationConfig":
    case "GetTaskPushNotificationConfig":
    case "ListTaskPushNotificationConfigs":
    case "DeleteTaskPushNotificationConfig":
      return pushAnswer(method, p, id, door);
  }
  throw new Error(`oracle: no rule for ${method}`);
}

/** A PollSession integer: absent or null, or an integer (or its digits as a string) in range. */
function pollInt(v: unknown, min: number, max: number): boolean {
  if (v === undefined || v === null) return true;
  const n = typeof v === "string" && /^\d{1,16}$/.test(v) ? Number(v) : v;
  return typeof n === "number" && Number.isInteger(n) && n >= min && n <= max;
}

/**
 * ProtoJSON: the lowerCamel name, else (absent or null) the proto field name, as the door reads
 * it (src/a2a/spec.ts protoObject; tests/door/spec_test.ts pins `messageId: null` beside
 * `message_id`). Seed 637195868's case 5922 (`pageSize: null` beside a junk `page_size`) found
 * the oracle taking the null alone.
 */
function field(o: Obj, camel: string): unknown {
  const v = o[camel];
  if (v !== undefined && v !== null) return v;
  return o[camel.replace(/[A-Z]/g, (ch) => "_" + ch.toLowerCase())] ?? v;
}

/** A ProtoJSON int32: a JSON integer, or a string of one, in the int32 range. */
function int32(v: unknown): number | null {
  const n = typeof v === "number"
    ? v
    : typeof v === "string" && /^-?\d+$/.test(v)
    ? Number(v)
    : NaN;
  return Number.isInteger(n) && n >= -(2 ** 31) && n <= 2 ** 31 - 1 ? n : null;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** `historyLength` (GetTask, ListTasks, a send's configuration): absent, or an int32 >= 0. */
function historyValid(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  const n = int32(v);
  return n !== null && n >= 0;
}

function listTasksValid(p: Obj): boolean {
  const present = (v: unknown) => v !== undefined && v !== null;
  // ProtoJSON: a null field is an absent one.
  const ctx = field(p, "contextId");
  if (present(ctx) && typeof ctx !== "string") return false;
  const status = field(p, "status");
  if (present(status)) {
    const name = typeof status === "number"
      ? (Number.isInteger(status) ? STATES[status] : undefined)
      : status;
    if (typeof name !== "string" || !STATES.includes(name)) return false;
  }
  const size = field(p, "pageSize");
  if (present(size)) {
    const n = int32(size);
    if (n === null || n < 1 || n > 100) return false;
  }
  const history = field(p, "historyLength");
  if (present(history)) {
    const n = int32(history);
    if (n === null || n < 0) return false;
  }
  const after = field(p, "statusTimestampAfter");
  if (present(after)) {
    if (typeof after !== "string" || !RFC3339.test(after) || Number.isNaN(Date.parse(after))) {
      return false;
    }
  }
  const include = field(p, "includeArtifacts");
  if (present(include) && typeof include !== "boolean") return false;
  const token = field(p, "pageToken");
  if (present(token)) {
    if (typeof token !== "string") return false;
    if (token !== "" && !cursorValid(token)) return false;
  }
  return true;
}

/** A page token the door issued: base64 of JSON [time, task id]. */
function cursorValid(token: string): boolean {
  try {
    const v = JSON.parse(atob(token));
    return Array.isArray(v) && v.length === 2 && Number.isSafeInteger(v[0]) &&
      typeof v[1] === "string";
  } catch {
    return false;
  }
}

/**
 * The push-config methods (docs/push.md): the task first (`taskId` or `task_id`:
 * missing -32602, unknown -32001), then the config's fields. The fuzzer never sends a valid Create
 * (it would store a config), so no config exists: Get finds none (-32001), List answers none,
 * Delete answers `{}`.
 */
function pushAnswer(method: string, p: Obj, id: RpcId, door: Door): Expect {
  const taskId = opt(p, "taskId");
  if (typeof taskId !== "string" || taskId === "") return err(id, -32602);
  if (taskId !== door.heldTask) return err(id, -32001);
  switch (method) {
    case "CreateTaskPushNotificationConfig": {
      const v = configVerdict(p);
      return v === "valid" || v === "unknown" ? { kind: "unsafe" } : err(id, -32602);
    }
    case "GetTaskPushNotificationConfig":
    case "DeleteTaskPushNotificationConfig": {
      const cid = opt(p, "id");
      if (typeof cid !== "string" || cid === "") return err(id, -32602);
      return method === "GetTaskPushNotificationConfig"
        ? err(id, -32001)
        : { kind: "rpc-result", id, what: "push-deleted" };
    }
    default: {
      const size = opt(p, "pageSize");
      if (
        size !== undefined &&
        !(typeof size === "number" && Number.isInteger(size) && size >= 0 && size <= 2 ** 31 - 1)
      ) return err(id, -32602);
      const token = opt(p, "pageToken");
      // The door issues no page token (a task's configs fit one page): any but "" is refused.
      if (token !== undefined && token !== "") return err(id, -32602);
      return { kind: "rpc-result", id, what: "push-list" };
    }
  }
}

/** ProtoJSON: null is absent. */
function opt(o: Obj, camel: string): unknown {
  const v = field(o, camel);
  return v === null ? undefined : v;
}

/** Hosts the generator uses whose verdict is known without DNS. */
const REFUSED_HOSTS = new Set([
  "127.0.0.1",
  "10.0.0.1",
  "[::1]",
  "localhost",
  "169.254.169.254",
  "0.0.0.0",
  "192.168.1.1",
]);
const PUBLIC_HOSTS = new Set(["203.0.113.9", "[2001:db8::1]"]);
const HEADER_SAFE = /^[\x20-\x7e]*$/;

/**
 * A TaskPushNotificationConfig's fields: `invalid` (-32602), `valid`, or `unknown` (its URL names
 * a host only DNS can judge).
 */
export function configVerdict(c: Obj): "invalid" | "valid" | "unknown" {
  const cid = opt(c, "id");
  if (
    cid !== undefined &&
    (typeof cid !== "string" || (cid !== "" && !/^[\x21-\x7e]{1,128}$/.test(cid)))
  ) {
    return "invalid";
  }
  const header = (v: unknown) =>
    v === undefined || (typeof v === "string" && v.length <= 4096 && HEADER_SAFE.test(v));
  if (!header(opt(c, "token"))) return "invalid";
  const auth = opt(c, "authentication");
  if (auth !== undefined) {
    if (!isObj(auth)) return "invalid";
    const scheme = opt(auth, "scheme");
    if (typeof scheme !== "string" || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(scheme)) {
      return "invalid";
    }
    if (!header(opt(auth, "credentials"))) return "invalid";
  }
  const url = opt(c, "url");
  if (typeof url !== "string" || url === "" || url.length > 2048) return "invalid";
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "invalid";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "invalid";
  if (u.username || u.password) return "invalid";
  if (REFUSED_HOSTS.has(u.hostname)) return "invalid";
  return PUBLIC_HOSTS.has(u.hostname) ? "valid" : "unknown";
}

/**
 * A send's `configuration.taskPushNotificationConfig`: null when absent, else the answer it gets
 * before the message is taken (-32003 with push off, -32602 when refused, unsafe when only DNS
 * could judge it); "ok" when it passes.
 */
function inlineAnswer(p: Obj, id: RpcId, door: Door): Expect | "ok" | null {
  const cfg = field(p, "configuration");
  if (!isObj(cfg)) return null;
  const inline = field(cfg, "taskPushNotificationConfig");
  if (inline === undefined || inline === null) return null;
  if (!door.push) return err(id, -32003);
  if (!isObj(inline)) return err(id, -32602);
  const taskId = field(inline, "taskId");
  if (taskId !== undefined && taskId !== null && typeof taskId !== "string") {
    return err(id, -32602);
  }
  const v = configVerdict(inline);
  if (v === "invalid") return err(id, -32602);
  if (v === "unknown") return { kind: "unsafe" };
  // A new task's id is not the client's to name: a taskId there is refused.
  if (typeof taskId === "string" && taskId !== "") return err(id, -32602);
  return "ok";
}

/** door-facts §5 checks 1–6, then routing by taskId. */
function sendAnswer(streaming: boolean, p: Obj, id: RpcId, door: Door): Expect {
  if (streaming && door.taskAcceptance === "none") return err(id, -32004);
  const m = p.message;
  if (!isObj(m)) return err(id, -32602);
  const messageId = m.messageId ?? m.message_id;
  if (typeof messageId !== "string" || messageId === "") return err(id, -32602);
  if (m.role !== "ROLE_USER") return err(id, -32602);
  const parts = m.parts;
  if (!Array.isArray(parts) || parts.length === 0) return err(id, -32602);
  let filePart = false;
  for (const part of parts) {
    if (!isObj(part)) return err(id, -32602);
    const set = ["text", "raw", "url", "data"].filter((k) => k in part);
    if (set.length !== 1) return err(id, -32602);
    for (const f of ["text", "raw", "url", "mediaType", "filename"]) {
      if (part[f] !== undefined && typeof part[f] !== "string") return err(id, -32602);
    }
    if (set[0] === "raw" || set[0] === "url") filePart = true;
  }
  const taskId = m.taskId ?? m.task_id;
  if (taskId !== undefined && taskId !== null && typeof taskId !== "string") return err(id, -32602);
  const contextId = m.contextId ?? m.context_id;
  if (contextId !== undefined && contextId !== null && typeof contextId !== "string") {
    return err(id, -32602);
  }
  const refs = m.referenceTaskIds ?? m.reference_task_ids;
  if (refs !== undefined && refs !== null) {
    if (!Array.isArray(refs)) return err(id, -32602);
    if (refs.some((r) => typeof r !== "string" || r === "")) return err(id, -32602);
    if (new Set(refs).size > 16) return err(id, -32602);
  }
  if (filePart) return err(id, -32005);
  const doorMeta = isObj(m.metadata) ? m.metadata[DOOR_URI] : undefined;
  if (isObj(doorMeta) && doorMeta.forgetSession === true) return err(id, -32602); // http capsule
  if (typeof taskId === "string" && taskId !== "") {
    // The held task is WORKING: a message naming it is refused; any other id is unknown.
    return err(id, taskId === door.heldTask ? -32004 : -32001);
  }
  if (!streaming) {
    const cfg = field(p, "configuration");
    if (cfg !== undefined && cfg !== null) {
      if (!isObj(cfg)) return err(id, -32602);
      const ri = field(cfg, "returnImmediately");
      if (ri !== undefined && ri !== null && typeof ri !== "boolean") return err(id, -32602);
      if (!historyValid(field(cfg, "historyLength"))) return err(id, -32602);
    }
    const inline = inlineAnswer(p, id, door);
    if (inline !== null && inline !== "ok") return inline;
    if (door.taskAcceptance === "none") return err(id, -32004);
    // The session is busy with its held task: the new one is rejected, and a rejected task gets
    // no push config.
    return { kind: "rpc-result", id, what: "rejected" };
  }
  const scfg = field(p, "configuration");
  if (isObj(scfg) && !historyValid(field(scfg, "historyLength"))) return err(id, -32602);
  const inline = inlineAnswer(p, id, door);
  if (inline !== null && inline !== "ok") return inline;
  return { kind: "stream", id, what: "rejected" };
}

/** How deeply a JSON text nests arrays and objects, read from its UTF-8 bytes (strings skipped). */
export function depthOf(bytes: Uint8Array): number {
  let max = 0;
  let d = 0;
  let str = false;
  let escaped = false;
  for (const b of bytes) {
    if (str) {
      if (escaped) escaped = false;
      else if (b === 0x5c) escaped = true;
      else if (b === 0x22) str = false;
    } else if (b === 0x22) str = true;
    else if (b === 0x5b || b === 0x7b) max = Math.max(max, ++d);
    else if (b === 0x5d || b === 0x7d) d--;
  }
  return max;
}
