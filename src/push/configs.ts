/**
 * A2A `TaskPushNotificationConfig`s (docs/push.md): reading one from a request
 * completely or refusing it with a reason (invalid params), and the session's store of them. A config
 * belongs to the caller that made it (the credential on an authenticated door): another caller
 * neither sees nor replaces it. The client-chosen `id` is kept; without one the door makes one.
 */
import { param } from "../a2a/proto_json.ts";
import { checkUrl, type Resolver, UrlRefused } from "./address_policy.ts";

export interface PushAuthentication {
  scheme: string;
  credentials?: string;
}

export interface PushConfig {
  id: string;
  taskId: string;
  url: URL;
  token?: string;
  authentication?: PushAuthentication;
  /** The caller that made it ("" on a public door). */
  caller: string;
  /**
   * The request named the stream extension in `A2A-Extensions`: deliveries carry every event of
   * the task as an activated stream does (murmur frames in their carriers), not only the A2A ones.
   */
  activated: boolean;
}

/** The config as A2A writes it (ProtoJSON, empty fields left out). */
export function configJson(c: PushConfig) {
  return {
    id: c.id,
    taskId: c.taskId,
    url: c.url.href,
    ...(c.token !== undefined ? { token: c.token } : {}),
    ...(c.authentication ? { authentication: c.authentication } : {}),
  };
}

/** Limits: per task, per session, and on the strings a config carries. */
export const MAX_CONFIGS_PER_TASK = 16;
export const MAX_CONFIGS = 1024;
const MAX_SECRET_LENGTH = 4096;
const ID = /^[\x21-\x7e]{1,128}$/;
/** An RFC 9110 token: an authentication scheme. */
const SCHEME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
/** What a header value may hold: visible ASCII and spaces, no line breaks (no header injection). */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/**
 * A config refused: the message names the field and why. The push room answers in its own terms;
 * the door (src/door/push_methods.ts) answers it as JSON-RPC invalid params.
 */
export class PushRefused extends Error {
  override name = "PushRefused";
}

const bad = (m: string): PushRefused => new PushRefused(m);

/** ProtoJSON: a null field is an absent one. */
function opt(obj: Record<string, unknown>, name: string): unknown {
  const v = param(obj, name);
  return v === null ? undefined : v;
}

function headerString(v: unknown, where: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw bad(`${where} must be a string`);
  if (v.length > MAX_SECRET_LENGTH) {
    throw bad(`${where} is ${v.length} characters long; at most ${MAX_SECRET_LENGTH} are taken`);
  }
  if (!HEADER_VALUE.test(v)) {
    throw bad(`${where} holds a character an HTTP header cannot carry (a line break or non-ASCII)`);
  }
  return v;
}

export interface ReadOptions {
  /** Where the config sits, for messages: `params` or `configuration.taskPushNotificationConfig`. */
  where: string;
  allowPrivate: boolean;
  resolve?: Resolver;
}

/**
 * The config's fields other than its task: `id`, `url`, `token`, `authentication`. Throws a
 * PushRefused naming the field and why.
 */
export async function readConfigFields(
  obj: Record<string, unknown>,
  o: ReadOptions,
): Promise<Omit<PushConfig, "taskId" | "caller" | "activated">> {
  const w = o.where === "params" ? "" : `${o.where}.`;
  const id = opt(obj, "id");
  if (id !== undefined && (typeof id !== "string" || (id !== "" && !ID.test(id)))) {
    throw bad(`${w}id must be a string of 1 to 128 visible ASCII characters`);
  }
  const url = opt(obj, "url");
  if (typeof url !== "string" || url === "") {
    throw bad(`${w}url is required: the receiver's http(s) URL`);
  }
  let parsed: URL;
  try {
    parsed = await checkUrl(url, o.allowPrivate, o.resolve);
  } catch (e) {
    if (e instanceof UrlRefused) throw bad(`${w}url ${e.message}`);
    throw e;
  }
  const token = headerString(opt(obj, "token"), `${w}token`);
  const authRaw = opt(obj, "authentication");
  let authentication: PushAuthentication | undefined;
  if (authRaw !== undefined) {
    if (typeof authRaw !== "object" || Array.isArray(authRaw)) {
      throw bad(`${w}authentication must be an AuthenticationInfo object {scheme, credentials}`);
    }
    const a = authRaw as Record<string, unknown>;
    const scheme = opt(a, "scheme");
    if (typeof scheme !== "string" || !SCHEME.test(scheme)) {
      throw bad(`${w}authentication.scheme must be an HTTP authentication scheme such as Bearer`);
    }
    const credentials = headerString(opt(a, "credentials"), `${w}authentication.credentials`);
    authentication = { scheme, ...(credentials !== undefined ? { credentials } : {}) };
  }
  return {
    id: typeof id === "string" && id !== "" ? id : crypto.randomUUID(),
    url: parsed,
    ...(token !== undefined ? { token } : {}),
    ...(authentication ? { authentication } : {}),
  };
}

/** The session's configs by task, then by caller and id. */
export class ConfigStore {
  #byTask = new Map<string, Map<string, PushConfig>>();
  #count = 0;

  static key(caller: string, id: string): string {
    return `${caller}\0${id}`;
  }

  /**
   * Adds or replaces (same caller, task and id) a config; the replaced one is returned. Throws
   * invalid params past the limits.
   */
  put(c: PushConfig): PushConfig | undefined {
    const key = ConfigStore.key(c.caller, c.id);
    const task = this.#byTask.get(c.taskId) ?? new Map<string, PushConfig>();
    const old = task.get(key);
    if (!old) {
      if (task.size >= MAX_CONFIGS_PER_TASK) {
        throw bad(
          `task ${c.taskId} has ${MAX_CONFIGS_PER_TASK} push configs, the most one task takes; delete one first`,
        );
      }
      if (this.#count >= MAX_CONFIGS) {
        throw bad(`this session holds ${MAX_CONFIGS} push configs, the most it takes`);
      }
      this.#count++;
    }
    task.set(key, c);
    this.#byTask.set(c.taskId, task);
    return old;
  }

  get(taskId: string, caller: string, id: string): PushConfig | undefined {
    return this.#byTask.get(taskId)?.get(ConfigStore.key(caller, id));
  }

  /** The caller's configs of a task, oldest first. */
  list(taskId: string, caller: string): PushConfig[] {
    return [...(this.#byTask.get(taskId)?.values() ?? [])].filter((c) => c.caller === caller);
  }

  delete(taskId: string, caller: string, id: string): PushConfig | undefined {
    const task = this.#byTask.get(taskId);
    const key = ConfigStore.key(caller, id);
    const old = task?.get(key);
    if (!old) return undefined;
    task!.delete(key);
    this.#count--;
    if (task!.size === 0) this.#byTask.delete(taskId);
    return old;
  }

  /** Every config of a task, whoever made it (what deliveries go to). */
  ofTask(taskId: string): PushConfig[] {
    return [...(this.#byTask.get(taskId)?.values() ?? [])];
  }

  hasTask(taskId: string): boolean {
    return this.#byTask.has(taskId);
  }
}
