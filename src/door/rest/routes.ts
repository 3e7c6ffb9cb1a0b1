/**
 * The HTTP+JSON binding's routes (A2A v1.0 §11.3; docs/door.md: HTTP+JSON): which method a
 * path and HTTP method name, and how the path's ids and the query string become the method's
 * `params` — the same object a JSON-RPC call carries, read by the same handler (handlers.ts).
 * murmur's own methods have routes under `/murmur/`, in the same `resource:verb` style.
 */
import { invalidParams, type RpcError } from "../jsonrpc.ts";

/** Where a REST request goes: its method, the ids its path names, what its query may carry. */
export interface RestRoute {
  /** The handler-table method (handlers.ts), or a push method until the door serves it. */
  method: string;
  /** Ids taken from the path, as params (`{id}` or `{taskId, id}`). */
  pathParams: Record<string, string>;
  /** Query parameters this route reads, with how each is typed; others are ignored. */
  query: Readonly<Record<string, QueryType>>;
  /** The route reads a JSON body (POST); the path's ids win over the body's. */
  body: boolean;
}

type QueryType = "string" | "bool";

const NO_QUERY = {} as const;
const LIST_TASKS_QUERY: Record<string, QueryType> = {
  contextId: "string",
  status: "string",
  pageSize: "string",
  pageToken: "string",
  historyLength: "string",
  statusTimestampAfter: "string",
  includeArtifacts: "bool",
};
const POLL_QUERY: Record<string, QueryType> = {
  cursor: "string",
  waitSecs: "string",
  maxEvents: "string",
};

interface Pattern {
  re: RegExp;
  /** HTTP method → method name and what it reads. */
  verbs: Record<string, { method: string; query?: Record<string, QueryType>; body?: boolean }>;
  /** Names of the regex's groups, in order, as params. */
  ids: string[];
}

const SEG = "([^/:]+)";

/** The route table, in SPEC §11.3's order, then murmur's. */
const PATTERNS: Pattern[] = [
  { re: /^\/message:send$/, ids: [], verbs: { POST: { method: "SendMessage", body: true } } },
  {
    re: /^\/message:stream$/,
    ids: [],
    verbs: { POST: { method: "SendStreamingMessage", body: true } },
  },
  {
    re: /^\/tasks$/,
    ids: [],
    verbs: { GET: { method: "ListTasks", query: LIST_TASKS_QUERY } },
  },
  {
    re: new RegExp(`^/tasks/${SEG}$`),
    ids: ["id"],
    verbs: { GET: { method: "GetTask", query: { historyLength: "string" } } },
  },
  {
    re: new RegExp(`^/tasks/${SEG}:cancel$`),
    ids: ["id"],
    verbs: { POST: { method: "CancelTask", body: true } },
  },
  {
    // SPEC §11.3 says POST, the proto's HTTP annotation GET: both are served.
    re: new RegExp(`^/tasks/${SEG}:subscribe$`),
    ids: ["id"],
    verbs: {
      GET: { method: "SubscribeToTask" },
      POST: { method: "SubscribeToTask", body: true },
    },
  },
  {
    re: new RegExp(`^/tasks/${SEG}/pushNotificationConfigs$`),
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
    re: new RegExp(`^/tasks/${SEG}/pushNotificationConfigs/${SEG}$`),
    ids: ["taskId", "id"],
    verbs: {
      GET: { method: "GetTaskPushNotificationConfig" },
      DELETE: { method: "DeleteTaskPushNotificationConfig" },
    },
  },
  { re: /^\/extendedAgentCard$/, ids: [], verbs: { GET: { method: "GetExtendedAgentCard" } } },
  {
    // GET so that an EventSource (which sends Last-Event-ID on its own) can follow the session.
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
      GET: { method: "murmur.PollSession", query: POLL_QUERY },
      POST: { method: "murmur.PollSession", body: true },
    },
  },
  {
    re: /^\/murmur\/session:stop$/,
    ids: [],
    verbs: { POST: { method: "murmur.StopSession", body: true } },
  },
];

/** Paths the HTTP+JSON binding owns: everything else is the JSON-RPC door's (or the page's). */
export function isRestPath(pathname: string): boolean {
  return pathname.startsWith("/message:") || pathname === "/tasks" ||
    pathname.startsWith("/tasks/") || pathname === "/extendedAgentCard" ||
    pathname.startsWith("/murmur/");
}

/** The route, or why there is none: no such path (404), or not with this HTTP method (405). */
export function matchRoute(
  httpMethod: string,
  pathname: string,
): RestRoute | { notFound: true } | { allow: string } | RpcError {
  for (const p of PATTERNS) {
    const m = p.re.exec(pathname);
    if (!m) continue;
    const verb = p.verbs[httpMethod];
    if (!verb) return { allow: Object.keys(p.verbs).join(", ") };
    const pathParams: Record<string, string> = {};
    for (let i = 0; i < p.ids.length; i++) {
      let v: string;
      try {
        v = decodeURIComponent(m[i + 1]);
      } catch {
        return invalidParams(
          `Invalid params: the path segment ${
            JSON.stringify(m[i + 1])
          } is not valid percent-encoding`,
        );
      }
      pathParams[p.ids[i]] = v;
    }
    return {
      method: verb.method,
      pathParams,
      query: verb.query ?? NO_QUERY,
      body: verb.body === true,
    };
  }
  return { notFound: true };
}

/**
 * The route's params: the body's fields (POST), then the query's (typed: `true`/`false` for a
 * boolean, numbers stay strings, which ProtoJSON's integer readers take), then the path's ids. A
 * query parameter given twice is refused: no method here takes a repeated one.
 */
export function paramsOf(
  route: RestRoute,
  search: URLSearchParams,
  body: Record<string, unknown>,
): Record<string, unknown> | RpcError {
  const params: Record<string, unknown> = { ...body };
  for (const [name, type] of Object.entries(route.query)) {
    const values = search.getAll(name);
    if (values.length === 0) continue;
    if (values.length > 1) {
      return invalidParams(`Invalid params: the query parameter ${name} is given more than once`);
    }
    const v = values[0];
    params[name] = type === "bool" ? (v === "true" ? true : v === "false" ? false : v) : v;
  }
  return { ...params, ...route.pathParams };
}
