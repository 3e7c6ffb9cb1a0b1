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
}

/** One task as GetTask answers it, or undefined. */
export async function readTask(
  c: RedisClient,
  sessionId: string,
  id: string,
): Promise<Task | undefined> {
  const raw = await c.call(["HGET", sessionKeys(sessionId).tasks, id]);
  return typeof raw === "string" ? (JSON.parse(raw) as Stored).task : undefined;
}

/** Every task, as ListTasks rows (src/door/methods.ts `listRows`). */
export async function readTaskRows(c: RedisClient, sessionId: string): Promise<ListRow[]> {
  const rows: ListRow[] = [];
  for (const raw of pairs(await c.call(["HGETALL", sessionKeys(sessionId).tasks])).values()) {
    const s = JSON.parse(raw) as Stored;
    rows.push({
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
