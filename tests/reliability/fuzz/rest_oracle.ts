/**
 * What the door must answer to one HTTP+JSON request, written from the rules (README "HTTP+JSON:
 * the REST binding", docs/protocol.md "HTTP+JSON": the route table, the checks in the JSON-RPC
 * order, the Status error form and its status mapping), not from the door's code. A request that
 * passes the binding's own checks gets the method's answer from the JSON-RPC oracle (oracle.ts),
 * mapped to its REST form: one implementation behind both bindings, so one rule for both.
 */
import {
  BODY_CAP,
  type Case,
  depthOf,
  type Door,
  type Expect,
  methodAnswer,
  PUSH_METHODS,
} from "./oracle.ts";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

interface Verb {
  method: string;
  query?: Record<string, "string" | "bool">;
  body?: boolean;
}

const LIST_QUERY = {
  contextId: "string",
  status: "string",
  pageSize: "string",
  pageToken: "string",
  historyLength: "string",
  statusTimestampAfter: "string",
  includeArtifacts: "bool",
} as const;

/** The README's route table: path pattern, its ids, and what each HTTP method calls. */
const ROUTES: { re: RegExp; ids: string[]; verbs: Record<string, Verb> }[] = [
  { re: /^\/message:send$/, ids: [], verbs: { POST: { method: "SendMessage", body: true } } },
  {
    re: /^\/message:stream$/,
    ids: [],
    verbs: { POST: { method: "SendStreamingMessage", body: true } },
  },
  { re: /^\/tasks$/, ids: [], verbs: { GET: { method: "ListTasks", query: LIST_QUERY } } },
  {
    re: /^\/tasks\/([^/:]+)$/,
    ids: ["id"],
    verbs: { GET: { method: "GetTask", query: { historyLength: "string" } } },
  },
  {
    re: /^\/tasks\/([^/:]+):cancel$/,
    ids: ["id"],
    verbs: { POST: { method: "CancelTask", body: true } },
  },
  {
    re: /^\/tasks\/([^/:]+):subscribe$/,
    ids: ["id"],
    verbs: {
      GET: { method: "SubscribeToTask" },
      POST: { method: "SubscribeToTask", body: true },
    },
  },
  {
    re: /^\/tasks\/([^/:]+)\/pushNotificationConfigs$/,
    ids: ["taskId"],
    verbs: {
      POST: { method: "CreateTaskPushNotificationConfig", body: true },
      GET: {
        method: "ListTaskPushNotificationConfigs",
        query: { pageSize: "string", pageToken: "string" },
      },
    },
  },
  {
    re: /^\/tasks\/([^/:]+)\/pushNotificationConfigs\/([^/:]+)$/,
    ids: ["taskId", "id"],
    verbs: {
      GET: { method: "GetTaskPushNotificationConfig" },
      DELETE: { method: "DeleteTaskPushNotificationConfig" },
    },
  },
  { re: /^\/extendedAgentCard$/, ids: [], verbs: { GET: { method: "GetExtendedAgentCard" } } },
  {
    re: /^\/murmur\/session:watch$/,
    ids: [],
    verbs: {
      GET: { method: "murmur.WatchSession" },
      POST: { method: "murmur.WatchSession", body: true },
    },
  },
  {
    re: /^\/murmur\/session:poll$/,
    ids: [],
    verbs: {
      GET: {
        method: "murmur.PollSession",
        query: { cursor: "string", waitSecs: "string", maxEvents: "string" },
      },
      POST: { method: "murmur.PollSession", body: true },
    },
  },
  {
    re: /^\/murmur\/session:stop$/,
    ids: [],
    verbs: { POST: { method: "murmur.StopSession", body: true } },
  },
];

/** The paths this binding owns (everything else is the JSON-RPC door's). */
export function isRestTarget(target: string): boolean {
  const p = target.split("?")[0];
  return p.startsWith("/message:") || p === "/tasks" || p.startsWith("/tasks/") ||
    p === "/extendedAgentCard" || p.startsWith("/murmur/");
}

/** README: JSON-RPC error → HTTP status (and the ErrorInfo reason a refusal must carry). */
const STATUS: Record<number, [number, string | null]> = {
  [-32001]: [404, "TASK_NOT_FOUND"],
  [-32002]: [400, "TASK_NOT_CANCELABLE"],
  [-32003]: [400, "PUSH_NOTIFICATION_NOT_SUPPORTED"],
  [-32004]: [400, "UNSUPPORTED_OPERATION"],
  [-32005]: [400, "CONTENT_TYPE_NOT_SUPPORTED"],
  [-32009]: [400, "VERSION_NOT_SUPPORTED"],
  [-32700]: [400, null],
  [-32601]: [404, null],
  [-32602]: [400, "INVALID_PARAMS"],
};

const restErr = (status: number, reason: string | null = null): Expect => ({
  kind: "rest-error",
  status,
  reason,
});

function lines(c: Case, name: string): string[] {
  return c.headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v.trim());
}

/** What the JSON-RPC oracle's answer for the method is, in the REST form. */
function asRest(e: Expect): Expect {
  switch (e.kind) {
    case "rpc-error": {
      const s = STATUS[e.code];
      if (!s) throw new Error(`rest oracle: no status for ${e.code}`);
      return restErr(s[0], s[1]);
    }
    case "rpc-result":
      return { kind: "rest-result", what: e.what };
    case "stream":
      return { kind: "rest-stream", what: e.what };
    default:
      return e;
  }
}

export function restExpected(c: Case, door: Door): Expect {
  if (c.conflictingLength) return { kind: "http", status: 400 };
  let scopes: Set<string> | null = null;
  if (door.tokens) {
    const auth = lines(c, "authorization");
    if (auth.length === 0) return restErr(401, "UNAUTHENTICATED");
    const m = auth.length === 1 ? /^bearer\s+(\S+)$/i.exec(auth[0]) : null;
    const name = m ? Object.keys(door.tokens).find((n) => door.tokens![n] === m[1]) : undefined;
    if (name === undefined) return restErr(401, "INVALID_TOKEN");
    scopes = new Set(door.scopes[name]);
  }
  // Peer consent after the gate, the same plain JSON body on every binding (oracle.ts).
  const origin = lines(c, "x-murmur-task-origin");
  if (origin.length === 1 && origin[0].toLowerCase() === "peer") {
    return { kind: "http", status: 403, error: "peer_not_accepted" };
  }
  const [path, search = ""] = splitTarget(c.target);
  const route = ROUTES.find((r) => r.re.test(path));
  if (!route) return restErr(404);
  const verb = route.verbs[c.method];
  if (!verb) {
    return { kind: "rest-error", status: 405, reason: null, allow: Object.keys(route.verbs) };
  }
  const m = route.re.exec(path)!;
  const pathParams: Obj = {};
  for (let i = 0; i < route.ids.length; i++) {
    try {
      pathParams[route.ids[i]] = decodeURIComponent(m[i + 1]);
    } catch {
      return restErr(400, "INVALID_PARAMS");
    }
  }

  let body: Obj = {};
  if (!verb.body) {
    // A route without a body refuses one declared, from its headers.
    const n = c.contentLength ?? c.body.length;
    if (!c.chunked && n > BODY_CAP) return restErr(413);
    if (c.chunked || n > 0) return restErr(400, "INVALID_PARAMS");
  } else {
    const ctypes = lines(c, "content-type");
    const ctype = ctypes.length ? ctypes.join(", ") : null;
    const media = ctype?.split(";", 1)[0].trim().toLowerCase();
    if (ctype !== null && media !== "application/json" && media !== "application/a2a+json") {
      return restErr(415, "CONTENT_TYPE_NOT_SUPPORTED");
    }
    const n = c.contentLength ?? c.body.length;
    if (n > BODY_CAP) return restErr(413);
    if (c.truncatedOnWire) return restErr(400);
    if (n > 0) {
      if (ctype === null) return restErr(415, "CONTENT_TYPE_NOT_SUPPORTED");
      const bytes = c.body.subarray(0, n);
      let value: unknown;
      try {
        const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        if (depthOf(bytes) > 512) return restErr(400);
        value = JSON.parse(text);
      } catch {
        return restErr(400);
      }
      if (!isObj(value)) return restErr(400, "INVALID_PARAMS");
      body = value;
    }
  }
  // The header, else the query parameter of that name (each value one line).
  const versions = lines(c, "a2a-version").length
    ? lines(c, "a2a-version")
    : new URLSearchParams(search).getAll("A2A-Version").map((v) => v.trim());
  if (versions.length !== 1 || !/^1\.0(\.\d+)?$/.test(versions[0])) {
    return restErr(400, "VERSION_NOT_SUPPORTED");
  }
  const method = verb.method;
  if (PUSH_METHODS.includes(method) && !door.push) {
    return restErr(400, "PUSH_NOTIFICATION_NOT_SUPPORTED");
  }
  if (method === "GetExtendedAgentCard" && !door.tokens) {
    return restErr(400, "UNSUPPORTED_OPERATION");
  }
  // The scopes as on JSON-RPC (oracle.ts): a poll is a watch, a push config a subscription.
  const scope = method === "murmur.PollSession"
    ? "murmur.WatchSession"
    : PUSH_METHODS.includes(method)
    ? "SubscribeToTask"
    : method;
  if (scopes && method !== "GetExtendedAgentCard" && !scopes.has(scope)) {
    return restErr(403, "INSUFFICIENT_SCOPE");
  }
  const params: Obj = { ...body };
  const query = new URLSearchParams(search);
  for (const [name, type] of Object.entries(verb.query ?? {})) {
    const values = query.getAll(name);
    if (values.length === 0) continue;
    if (values.length > 1) return restErr(400, "INVALID_PARAMS");
    const v = values[0];
    params[name] = type === "bool" ? (v === "true" ? true : v === "false" ? false : v) : v;
  }
  Object.assign(params, pathParams);
  return asRest(methodAnswer(method, params, null, door));
}

function splitTarget(target: string): [string, string] {
  const i = target.indexOf("?");
  return i < 0 ? [target, ""] : [target.slice(0, i), target.slice(i + 1)];
}
