/**
 * What an edge reads of a session from Redis, per request: its meta hash (door address, cards,
 * conversation mode, how its tokens verify) and its tasks (each as GetTask answers it), as the
 * capsule's publisher wrote them (src/cluster/publisher.ts).
 */
import type { Task, TaskState } from "../a2a/types.ts";
import { sessionKeys } from "../cluster/keys.ts";
import type { RedisClient } from "../cluster/client.ts";
import type { ListRow } from "../door/methods.ts";

export interface SessionMeta {
  door: string;
  name: string;
  conversationMode: "stateless" | "threaded";
  acceptsTasks: boolean;
  /** none: a public door; shared: tokens verify under MURMUR_CLUSTER_KEY; unverifiable. */
  auth: "none" | "shared" | "unverifiable";
  card: string;
  extendedCard: string | null;
  /** The capsule takes push-notification configs (its card says so): the edge forwards them. */
  push: boolean;
}

function pairs(r: unknown): Map<string, string> {
  const m = new Map<string, string>();
  if (Array.isArray(r)) {
    for (let i = 0; i + 1 < r.length; i += 2) m.set(String(r[i]), String(r[i + 1]));
  }
  return m;
}

/** The session's meta, or null when Redis holds none (no such session, or it expired). */
export async function readMeta(c: RedisClient, sessionId: string): Promise<SessionMeta | null> {
  const m = pairs(await c.call(["HGETALL", sessionKeys(sessionId).meta]));
  const door = m.get("door");
  const card = m.get("card");
  if (door === undefined || card === undefined) return null;
  const auth = m.get("auth");
  return {
    door,
    name: m.get("name") ?? "",
    conversationMode: m.get("conversationMode") === "threaded" ? "threaded" : "stateless",
    acceptsTasks: m.get("acceptsTasks") !== "false",
    auth: auth === "none" || auth === "shared" ? auth : "unverifiable",
    card,
    extendedCard: m.get("extendedCard") ?? null,
    push: (JSON.parse(card) as { capabilities?: { pushNotifications?: boolean } }).capabilities
      ?.pushNotifications === true,
  };
}

interface Stored {
  changedAt: number;
  task: Task;
  /** Messages the task's history has had, and keeps (src/cluster/keys.ts `history`). */
  history?: { total: number; kept: number };
}

/**
 * Fills in each task's `history` as GetTask reads `historyLength` (undefined: every kept message;
 * 0: none; n: the n newest), with one HMGET of just those messages.
 */
async function withHistory(
  c: RedisClient,
  sessionId: string,
  stored: Stored[],
  historyLength: number | undefined,
): Promise<Task[]> {
  const fields: string[] = [];
  const spans: [number, number][] = [];
  for (const s of stored) {
    const h = s.history ?? { total: 0, kept: 0 };
    const n = historyLength === undefined ? h.kept : Math.min(historyLength, h.kept);
    spans.push([fields.length, n]);
    for (let i = h.total - n; i < h.total; i++) fields.push(`${s.task.id}:${i}`);
  }
  const values = fields.length
    ? await c.call(["HMGET", sessionKeys(sessionId).history, ...fields])
    : [];
  return stored.map((s, i) => {
    const [from, n] = spans[i];
    if (n === 0) return s.task;
    const got = (values as unknown[]).slice(from, from + n).filter((v) => typeof v === "string");
    return { ...s.task, history: got.map((v) => JSON.parse(v as string)) };
  });
}

/**
 * A stored task's JSON with its published files' `url` parts naming this edge rather than the
 * capsule's door (`<door>/files/…` → `<edge base>/files/…`, which the edge forwards).
 */
export type Rewrite = (json: string) => string;

export function filesAt(door: string, base: string): Rewrite {
  const { from, to } = filesPrefixes(door, base);
  return (json) => json.includes(from) ? json.replaceAll(from, to) : json;
}

/** The capsule's files prefix and the edge's, as JSON text writes them. */
export function filesPrefixes(door: string, base: string): { from: string; to: string } {
  return {
    from: JSON.stringify(`${door.replace(/\/+$/, "")}/files/`).slice(1, -1),
    to: JSON.stringify(`${base}/files/`).slice(1, -1),
  };
}

/** One task as GetTask answers it, or undefined. */
export async function readTask(
  c: RedisClient,
  sessionId: string,
  id: string,
  historyLength?: number,
  rewrite: Rewrite = (j) => j,
): Promise<Task | undefined> {
  const raw = await c.call(["HGET", sessionKeys(sessionId).tasks, id]);
  if (typeof raw !== "string") return undefined;
  return (await withHistory(c, sessionId, [JSON.parse(rewrite(raw)) as Stored], historyLength))[0];
}

/** ListTasks' page with each task's history (`listRows` answers them without). */
export async function pageWithHistory(
  c: RedisClient,
  sessionId: string,
  page: { tasks: Task[] },
  rows: ListRow[],
  historyLength: number | undefined,
): Promise<void> {
  const byId = new Map(rows.map((r) => [r.id, r as ListRow & { stored?: Stored }]));
  const stored = page.tasks.map((t) => ({ ...byId.get(t.id)!.stored!, task: t }));
  page.tasks = await withHistory(c, sessionId, stored, historyLength);
}

/** Every task, as ListTasks rows (src/door/methods.ts `listRows`). */
export async function readTaskRows(
  c: RedisClient,
  sessionId: string,
  rewrite: Rewrite = (j) => j,
): Promise<(ListRow & { stored: Stored })[]> {
  const rows: (ListRow & { stored: Stored })[] = [];
  for (const raw of pairs(await c.call(["HGETALL", sessionKeys(sessionId).tasks])).values()) {
    const s = JSON.parse(rewrite(raw)) as Stored;
    rows.push({
      stored: s,
      id: s.task.id,
      contextId: s.task.contextId,
      state: s.task.status.state as TaskState,
      changedAt: s.changedAt,
      task: (include) => {
        if (include) return s.task;
        const { artifacts: _, ...rest } = s.task;
        return rest;
      },
    });
  }
  return rows;
}

/** The card JSON with its interface URL set to this edge's address for the session. */
export function cardFor(json: string, url: string): unknown {
  const card = JSON.parse(json) as { supportedInterfaces?: { url: string }[] };
  for (const i of card.supportedInterfaces ?? []) i.url = url;
  return card;
}
