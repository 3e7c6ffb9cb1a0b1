// @ts-check
/**
 * The live page's picture of a session, built from `murmur.WatchSession` events alone
 * (docs/protocol.md): pure functions, no DOM, so tests/ui/model_test.ts runs them in Deno.
 *
 * Bounded whatever the session's length (docs/live-page.md): at most MAX_TASKS tasks, each
 * with at most MAX_ITEMS items (text blocks, thinking, tool calls, status lines) and each text at
 * most MAX_TEXT characters; what falls off the front is counted and said, never silently lost.
 * The view renders only what the model holds, so the page's DOM is bounded the same way.
 */

export const STREAM_URI =
  "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
export const MAX_TASKS = 60;
export const MAX_ITEMS = 150;
export const MAX_TEXT = 32 * 1024;
export const MAX_NOTICES = 30;
/** Published files kept per task (the rest are in GetTask). */
export const MAX_FILES = 64;

/** Murmur's word for each A2A state (docs/protocol.md "Task states and status messages"). */
export const STATE_WORDS = {
  TASK_STATE_SUBMITTED: "submitted",
  TASK_STATE_WORKING: "working",
  TASK_STATE_INPUT_REQUIRED: "input-required",
  TASK_STATE_COMPLETED: "completed",
  TASK_STATE_FAILED: "failed",
  TASK_STATE_CANCELED: "canceled",
  TASK_STATE_REJECTED: "rejected",
};

/** @param {string} state */
export function stateWord(state) {
  return /** @type {Record<string, string>} */ (STATE_WORDS)[state] ?? state;
}

/** @param {string} state */
export function isTerminal(state) {
  return state === "TASK_STATE_COMPLETED" || state === "TASK_STATE_FAILED" ||
    state === "TASK_STATE_CANCELED" || state === "TASK_STATE_REJECTED";
}

/**
 * @typedef {{ kind: "text" | "thinking", key: number, rev: number, text: string,
 *   cut: number, open: boolean }} TextItem
 * @typedef {{ kind: "tool", key: number, rev: number, toolCallId: string | null,
 *   toolName: string, inputBytes: number | null, startedAt: number,
 *   artifact: Artifact | null, input: string | null | undefined }} ToolItem a tool call; `input`
 *   is its input as JSON once GET /ui/status told it (null: the door holds none; undefined: not
 *   asked yet)
 * @typedef {{ kind: "status", key: number, rev: number, state: string, text: string }} StatusItem
 * @typedef {{ kind: "suggestion", key: number, rev: number, text: string }} SuggestionItem
 * @typedef {TextItem | ToolItem | StatusItem | SuggestionItem} Item
 * @typedef {{ kind: "approval", tool: string, source?: string,
 *   arguments?: Record<string, unknown>, argumentsPreview?: string, argumentsHash: string,
 *   reason?: string }} Approval the tool call an INPUT_REQUIRED task waits to have approved
 *   (docs/approvals.md "The wire")
 * @typedef {{ toolName: string, content: string, fenceSource: string | null,
 *   toolCallId: string | null, isError: boolean, durationMs: number | null,   exitCode: number |
 * null, truncated: boolean,   attachments: { mediaType: string, sizeBytes: number, sha256: string,
 * url: string }[] }} Artifact
 * @typedef {{
 *   id: string, contextId: string, seq: number, rev: number, state: string, message: string,
 *   turn: number, reopens: number, items: Item[], dropped: number, prompt: string | null, approval: Approval | null,
 *   response: string | null, lane: string | null, origin: string | null, files: Published[],
 *   firstSeen: number, lastChange: number, calls: Map<string, ToolItem>,
 *   request: string | null,
 * }} Task
 * @typedef {{ name: string, mediaType: string, raw: string | null, path: string | null,
 *   data: unknown }} Published a file or data the task published (docs/protocol.md "Files and
 *   data"): inline bytes (`raw`, base64), a door path to fetch (`files/<task>/<artifact>`), or JSON
 * @typedef {{ key: number, kind: "gap" | "lagged" | "lost" | "connection" | "error" | "info",
 *   text: string, at: number }} Notice
 * @typedef {{ name: string, used?: number, resetsAtMs?: number, windowMinutes?: number,
 *   state?: string }} QuotaWindow
 * @typedef {{
 *   tasks: Map<string, Task>, droppedTasks: number, nextSeq: number, nextKey: number,
 *   lastId: number, received: number, lost: number, duplicates: number,
 *   conversationMode: string | null, closed: boolean,
 *   notices: Notice[], noticeCount: number, quota: Map<string, QuotaWindow>,
 *   dirty: Set<string>, sessionDirty: boolean,
 * }} SessionModel
 */

/** @returns {SessionModel} */
export function createModel() {
  return {
    tasks: new Map(),
    droppedTasks: 0,
    nextSeq: 1,
    nextKey: 1,
    lastId: 0,
    received: 0,
    lost: 0,
    duplicates: 0,
    conversationMode: null,
    closed: false,
    notices: [],
    noticeCount: 0,
    quota: new Map(),
    dirty: new Set(),
    sessionDirty: true,
  };
}

/**
 * Adds a notice (gap, lagged, lost connection, …): kept in the session's notice list, newest
 * last, at most MAX_NOTICES of them (the count of all of them is kept too).
 * @param {SessionModel} m
 * @param {Notice["kind"]} kind
 * @param {string} text
 * @param {number} now
 */
export function notice(m, kind, text, now) {
  m.notices.push({ key: m.nextKey++, kind, text, at: now });
  m.noticeCount++;
  if (m.notices.length > MAX_NOTICES) m.notices.shift();
  m.sessionDirty = true;
}

/**
 * @param {SessionModel} m
 * @param {string} id
 * @param {string} contextId
 * @param {number} now
 * @returns {Task}
 */
function taskOf(m, id, contextId, now) {
  let t = m.tasks.get(id);
  if (t) return t;
  t = {
    id,
    contextId,
    seq: m.nextSeq++,
    rev: 0,
    state: "TASK_STATE_SUBMITTED",
    message: "",
    turn: 0,
    reopens: 0,
    items: [],
    dropped: 0,
    prompt: null,
    approval: null,
    response: null,
    files: [],
    lane: null,
    origin: null,
    request: null,
    firstSeen: now,
    lastChange: now,
    calls: new Map(),
  };
  m.tasks.set(id, t);
  if (m.tasks.size > MAX_TASKS) dropOldestTask(m);
  m.sessionDirty = true;
  return t;
}

/**
 * Drops the oldest ended task (or the oldest task, when none has ended).
 * @param {SessionModel} m
 */
function dropOldestTask(m) {
  let victim = null;
  for (const t of m.tasks.values()) {
    if (isTerminal(t.state)) {
      victim = t;
      break;
    }
  }
  victim ??= m.tasks.values().next().value ?? null;
  if (!victim) return;
  m.tasks.delete(victim.id);
  m.dirty.delete(victim.id);
  m.droppedTasks++;
}

/**
 * @param {Task} t
 * @param {Item} item
 */
function push(t, item) {
  t.items.push(item);
  if (t.items.length > MAX_ITEMS) {
    const gone = /** @type {Item} */ (t.items.shift());
    t.dropped++;
    if (gone.kind === "tool" && gone.toolCallId) t.calls.delete(gone.toolCallId);
  }
}

/** @param {TextItem} item @param {string} text */
function appendText(item, text) {
  item.text += text;
  if (item.text.length > MAX_TEXT) {
    // Keep the tail, cut on a code point boundary (never half a surrogate pair).
    let from = item.text.length - MAX_TEXT;
    const c = item.text.charCodeAt(from);
    if (c >= 0xdc00 && c <= 0xdfff) from++;
    item.cut += from;
    item.text = item.text.slice(from);
  }
  item.rev++;
}

/** @param {Task} t @returns {Item | undefined} */
function last(t) {
  return t.items[t.items.length - 1];
}

/**
 * Ends the open text and thinking blocks: what streams next starts a new block.
 * @param {Task} t
 */
function closeBlocks(t) {
  const l = last(t);
  if (l && (l.kind === "text" || l.kind === "thinking") && l.open) {
    l.open = false;
    l.rev++;
  }
}

/**
 * @param {SessionModel} m
 * @param {Task} t
 * @param {Record<string, any>} f the frame object under metadata[STREAM_URI]
 * @param {number} now
 */
function taskFrame(m, t, f, now) {
  switch (f.frame) {
    case "text":
    case "thinking": {
      const kind = f.frame;
      const text = typeof f.text === "string" ? f.text : "";
      const l = last(t);
      if (l && (l.kind === "text" || l.kind === "thinking") && l.kind === kind && l.open) {
        if (text) appendText(l, text);
      } else if (text) {
        /** @type {TextItem} */
        const item = { kind, key: m.nextKey++, rev: 0, text: "", cut: 0, open: true };
        appendText(item, text);
        push(t, item);
      }
      // `final: true` ends the turn's text (docs/protocol.md "Frames": `text`): the next chunk is a
      // new block.
      if (kind === "text" && f.final === true) closeBlocks(t);
      return;
    }
    case "tool-call-started": {
      closeBlocks(t);
      /** @type {ToolItem} */
      const item = {
        kind: "tool",
        key: m.nextKey++,
        rev: 0,
        toolCallId: String(f.toolCallId),
        toolName: String(f.toolName),
        inputBytes: null,
        startedAt: now,
        artifact: null,
        input: undefined,
      };
      push(t, item);
      t.calls.set(item.toolCallId ?? "", item);
      return;
    }
    case "tool-call-progress": {
      const item = t.calls.get(String(f.toolCallId));
      if (item && typeof f.inputBytes === "number") {
        item.inputBytes = Math.max(item.inputBytes ?? 0, f.inputBytes);
        item.rev++;
      }
      return;
    }
    case "artifact": {
      closeBlocks(t);
      /** @type {Artifact} */
      const a = {
        toolName: String(f.toolName),
        content: typeof f.content === "string" ? f.content : "",
        fenceSource: f.fenceSource ?? null,
        toolCallId: f.toolCallId ?? null,
        isError: f.isError === true,
        durationMs: typeof f.durationMs === "number" ? f.durationMs : null,
        exitCode: typeof f.exitCode === "number" ? f.exitCode : null,
        truncated: f.truncated === true,
        attachments: Array.isArray(f.attachments) ? f.attachments : [],
      };
      const started = a.toolCallId ? t.calls.get(a.toolCallId) : undefined;
      if (started && !started.artifact) {
        started.artifact = a;
        started.rev++;
      } else {
        // A start is a hint, never a prerequisite (docs/protocol.md "Event order within a task").
        push(t, {
          kind: "tool",
          key: m.nextKey++,
          rev: 0,
          toolCallId: a.toolCallId,
          toolName: a.toolName,
          inputBytes: null,
          startedAt: now,
          artifact: a,
          input: undefined,
        });
      }
      return;
    }
    case "quota":
      // A later report replaces a window of the same name and leaves the others standing.
      for (const w of Array.isArray(f.windows) ? f.windows : []) {
        if (w && typeof w.name === "string") m.quota.set(w.name, w);
      }
      m.sessionDirty = true;
      return;
    case "suggested-prompt":
      closeBlocks(t);
      push(t, { kind: "suggestion", key: m.nextKey++, rev: 0, text: String(f.text) });
      return;
    case "steer-taken":
      // A steer the task read (docs/approvals.md "Steering"): a line where it took effect.
      closeBlocks(t);
      push(t, {
        kind: "status",
        key: m.nextKey++,
        rev: 0,
        state: t.state,
        text: `steer read before turn ${Number(f.turn)}`,
      });
      return;
    default:
      // An unknown frame is ignored (docs/protocol.md "Unknown frames and keys").
      return;
  }
}

/**
 * The approval data part of a status message, when it carries one.
 * @param {Record<string, any> | undefined} message
 * @returns {Approval | null}
 */
function approvalOf(message) {
  for (const p of message?.parts ?? []) {
    const d = p?.data;
    if (d && d.kind === "approval" && typeof d.argumentsHash === "string") {
      return { ...d, tool: String(d.tool ?? "") };
    }
  }
  return null;
}

/**
 * @param {SessionModel} m
 * @param {Record<string, any>} su a statusUpdate
 * @param {number} now
 */
function statusUpdate(m, su, now) {
  if (typeof su.taskId !== "string") return;
  const t = taskOf(m, su.taskId, String(su.contextId ?? ""), now);
  const meta = su.metadata?.[STREAM_URI];
  const status = su.status ?? {};
  if (meta && typeof meta.frame === "string") {
    taskFrame(m, t, meta, now);
  } else {
    const state = String(status.state ?? t.state);
    const text = status.message?.parts?.map((/** @type {any} */ p) => p.text ?? "").join("") ??
      "";
    closeBlocks(t);
    t.state = state;
    t.message = text;
    t.lastChange = now;
    const turn = /^inference turn (\d+)/.exec(text);
    if (turn) t.turn = Number(turn[1]);
    if (meta && typeof meta.reopen === "number") t.reopens = meta.reopen;
    t.prompt = state === "TASK_STATE_INPUT_REQUIRED" ? text : null;
    t.approval = state === "TASK_STATE_INPUT_REQUIRED" ? approvalOf(status.message) : null;
    if (text || isTerminal(state) || state === "TASK_STATE_INPUT_REQUIRED") {
      push(t, { kind: "status", key: m.nextKey++, rev: 0, state, text });
    }
    m.sessionDirty = true;
  }
  t.rev++;
  m.dirty.add(t.id);
}

/**
 * Applies one SSE event of a WatchSession: `id` is its `id:` line (null when unnumbered), `data`
 * its parsed JSON-RPC response. Numbered events at or below the last id applied are duplicates
 * and change nothing; a jump in ids is counted as lost (a WatchSession sees every numbered event,
 * so its ids have no hole unless events were lost). Returns the connection frame it carried, if
 * any, so the connection can act on it (reconnect after `lagged`, stop after `capsule-closed`).
 * @param {SessionModel} m
 * @param {number | null} id
 * @param {Record<string, any>} data
 * @param {number} now
 * @returns {Record<string, any> | null}
 */
export function applyEvent(m, id, data, now) {
  if (id !== null) {
    if (id <= m.lastId) {
      m.duplicates++;
      return null;
    }
    if (id > m.lastId + 1) m.lost += id - m.lastId - 1;
    m.lastId = id;
    m.received++;
    m.sessionDirty = true;
  }
  if (data.error) {
    notice(m, "error", `the door answered an error: ${data.error.message ?? "unknown"}`, now);
    return null;
  }
  const r = data.result ?? {};
  if (r.statusUpdate) {
    statusUpdate(m, r.statusUpdate, now);
    return null;
  }
  if (r.artifactUpdate) {
    const au = r.artifactUpdate;
    if (typeof au.taskId !== "string") return null;
    const t = taskOf(m, au.taskId, String(au.contextId ?? ""), now);
    if (au.artifact?.name === "response") {
      t.response = (au.artifact.parts ?? []).map((/** @type {any} */ p) => p.text ?? "").join("");
      t.rev++;
      m.dirty.add(t.id);
    } else if (t.files.length < MAX_FILES) {
      const file = publishedOf(au.artifact);
      if (file) {
        t.files.push(file);
        t.rev++;
        m.dirty.add(t.id);
      }
    }
    return null;
  }
  const f = r.message?.metadata?.[STREAM_URI];
  if (f && typeof f.frame === "string") {
    connectionFrame(m, f, now);
    return f;
  }
  return null;
}

/**
 * @param {SessionModel} m
 * @param {Record<string, any>} f
 * @param {number} now
 */
function connectionFrame(m, f, now) {
  switch (f.frame) {
    case "connection-ack":
      m.conversationMode = typeof f.conversationMode === "string" ? f.conversationMode : null;
      m.sessionDirty = true;
      return;
    case "gap": {
      const first = Number(f.firstAvailableId);
      const gone = Math.max(0, first - m.lastId - 1);
      notice(
        m,
        "gap",
        gone > 0
          ? `${gone} event${gone === 1 ? "" : "s"} (ids ${m.lastId + 1}–${first - 1}) ` +
            `had left the capsule's replay buffer and are lost`
          : `the capsule's replay starts at id ${first}`,
        now,
      );
      return;
    }
    case "lagged": {
      const n = Number(f.missed);
      notice(
        m,
        "lagged",
        `this page fell behind and the capsule dropped ${n} live event${n === 1 ? "" : "s"} ` +
          `for it; reconnecting from id ${m.lastId} to replay what is still buffered`,
        now,
      );
      return;
    }
    case "capsule-closed":
      m.closed = true;
      notice(m, "info", "the capsule closed its event stream", now);
      return;
  }
}

/**
 * Sets lanes, origins and requests the door reported (GET /ui/status) for the tasks asked about;
 * one the door no longer holds is marked unknown, so it is not asked about again.
 * @param {SessionModel} m
 * @param {string[]} asked
 * @param {Record<string, { lane: string, origin: string, request?: string }>} lanes
 */
export function applyLanes(m, asked, lanes) {
  for (const id of asked) {
    const t = m.tasks.get(id);
    if (!t) continue;
    t.lane = lanes[id]?.lane ?? "unknown";
    t.origin = lanes[id]?.origin ?? "unknown";
    t.request = typeof lanes[id]?.request === "string" ? lanes[id].request : null;
    t.rev++;
    m.dirty.add(id);
  }
}

/**
 * Task ids whose lane is not known yet (asked of the door in one status call).
 * @param {SessionModel} m
 * @returns {string[]}
 */
export function unknownLanes(m) {
  const out = [];
  for (const t of m.tasks.values()) if (t.lane === null) out.push(t.id);
  return out;
}

/**
 * A published file or data artifact, or null for another kind. A `url` part is fetched by its path
 * under the page's own door (`files/…`), so a page served by an edge reads it through the edge.
 * @param {any} a
 * @returns {Published | null}
 */
function publishedOf(a) {
  const p = a?.parts?.[0];
  if (!p || typeof p !== "object") return null;
  const name = String(p.filename ?? a.name ?? a.artifactId ?? "artifact");
  const mediaType = String(p.mediaType ?? "application/octet-stream");
  if (typeof p.raw === "string") return { name, mediaType, raw: p.raw, path: null, data: null };
  if (typeof p.url === "string") {
    const at = p.url.indexOf("/files/");
    if (at < 0) return null;
    return { name, mediaType, raw: null, path: p.url.slice(at + 1), data: null };
  }
  if ("data" in p) return { name, mediaType, raw: null, path: null, data: p.data };
  return null;
}

/**
 * `<task id>/<call id>` of each finished tool call whose input has not been asked for yet (GET
 * /ui/status `?call=`).
 * @param {SessionModel} m
 * @returns {string[]}
 */
export function unknownCalls(m) {
  const out = [];
  for (const t of m.tasks.values()) {
    for (const item of t.items) {
      if (item.kind === "tool" && item.artifact && item.toolCallId && item.input === undefined) {
        out.push(`${t.id}/${item.toolCallId}`);
      }
    }
  }
  return out;
}

/**
 * Sets the inputs the door reported for the calls asked about; one it does not hold is null, so
 * it is not asked about again.
 * @param {SessionModel} m
 * @param {string[]} asked
 * @param {Record<string, string>} inputs
 */
export function applyCalls(m, asked, inputs) {
  for (const key of asked) {
    const at = key.indexOf("/");
    const t = m.tasks.get(key.slice(0, at));
    const id = key.slice(at + 1);
    const item = t?.items.find((i) => i.kind === "tool" && i.toolCallId === id);
    if (!t || !item || item.kind !== "tool") continue;
    item.input = typeof inputs[key] === "string" ? inputs[key] : null;
    item.rev++;
    t.rev++;
    m.dirty.add(t.id);
  }
}
