/**
 * The fuzzer's HTTP+JSON requests: a JSON-RPC case already built and broken (gen.ts) moved to its
 * method's REST route (docs/door.md "HTTP+JSON: the REST binding") — the path's ids from its params
 * (or odd ones), the rest of its params as the JSON body (POST) or the query string (GET) — and
 * sometimes a route that does not exist or an HTTP method the route does not answer.
 */
import { chance, pick, type Rand } from "../helpers/rand.ts";
import type { Case } from "./oracle.ts";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** method → [HTTP method, path with `{id}`/`{taskId}`/`{configId}`, body (POST) or query (GET)]. */
const ROUTE_OF: Record<string, [string, string]> = {
  SendMessage: ["POST", "/message:send"],
  SendStreamingMessage: ["POST", "/message:stream"],
  GetTask: ["GET", "/tasks/{id}"],
  ListTasks: ["GET", "/tasks"],
  CancelTask: ["POST", "/tasks/{id}:cancel"],
  SubscribeToTask: ["POST", "/tasks/{id}:subscribe"],
  "murmur.WatchSession": ["GET", "/murmur/session:watch"],
  "murmur.PollSession": ["GET", "/murmur/session:poll"],
  "murmur.StopSession": ["POST", "/murmur/session:stop"],
  GetExtendedAgentCard: ["GET", "/extendedAgentCard"],
};

const ODD_TARGETS = [
  "/tasks/tsk_x/y/z",
  "/message:sned",
  "/message",
  "/tasks/",
  "/tasks/:cancel",
  "/murmur/",
  "/murmur/session:watchx",
  "/tasks/tsk_x/pushNotificationConfigs",
  "/tasks/tsk_x/pushNotificationConfigs/c1",
  "/extendedAgentCard?x=1",
];

/** An id for a path segment: the params' own when it is a string, else one of these. */
function segment(r: Rand, v: unknown, held: string): string {
  // A lone surrogate has no UTF-8 form, so encodeURIComponent throws on it (URIError): such a
  // string goes out as its well-formed text (U+FFFD in its place), as any client would send it.
  if (typeof v === "string" && v !== "" && chance(r, 0.8)) {
    return encodeURIComponent(v.toWellFormed());
  }
  return pick(r, [
    encodeURIComponent(held),
    "tsk_unknown",
    "%zz",
    "a%3Ab",
    "%F0%9F%A6%80",
    encodeURIComponent("../x"),
  ]);
}

/** The query string of a GET route: each top-level param as text (objects as JSON). */
function queryOf(r: Rand, params: unknown): string {
  if (!isObj(params)) return "";
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (k === "id") continue;
    const text = typeof v === "string" ? v : JSON.stringify(v) ?? "";
    q.append(k, text.slice(0, 2000));
    if (chance(r, 0.05)) q.append(k, text.slice(0, 2000));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/**
 * Rewrites `c` (a JSON-RPC case of `method` with `params`) as an HTTP+JSON request; `body` is the
 * params serialized (and perhaps broken). Returns a note for the failure message.
 */
export function toRest(
  r: Rand,
  c: Case,
  method: string,
  params: unknown,
  body: Uint8Array,
  held: string,
): string {
  const route = ROUTE_OF[method];
  // The JSON-RPC headers, minus its Content-Type: each route sets its own.
  c.headers = c.headers.filter(([k]) => k.toLowerCase() !== "content-type");
  if (!route || chance(r, 0.05)) {
    c.method = pick(r, ["GET", "POST", "DELETE", "PUT"]);
    c.target = pick(r, ODD_TARGETS);
  } else {
    const id = isObj(params) ? params.id : undefined;
    const path = route[1].replace("{id}", () => segment(r, id, held));
    c.method = chance(r, 0.04) ? pick(r, ["GET", "POST", "DELETE", "PATCH"]) : route[0];
    // SubscribeToTask and the watch also answer the other verb.
    if (method === "SubscribeToTask" && chance(r, 0.3)) c.method = "GET";
    c.target = c.method === "GET" ? path + queryOf(r, params) : path;
  }
  if (c.method === "GET" || c.method === "DELETE") {
    c.body = new Uint8Array();
  } else {
    c.body = chance(r, 0.05) ? new Uint8Array() : body;
    const ctype = chance(r, 0.9)
      ? pick(r, ["application/json", "application/a2a+json", "application/a2a+json; charset=utf-8"])
      : pick(r, ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", ""]);
    if (ctype !== "" || chance(r, 0.5)) c.headers.unshift(["Content-Type", ctype]);
  }
  return `HTTP+JSON ${c.method} ${c.target.slice(0, 120)}`;
}
