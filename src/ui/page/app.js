/**
 * The live page's entry: asks for a token when the door wants one (or, on a public door, when an
 * approval answer needs the operator's), learns the caller's scopes
 * from GET /ui/status, follows murmur.WatchSession (client.js) into the model (model.js), and
 * draws it (view.js) at most once per animation frame.
 */
import { AuthError, DoorClient, Watcher } from "./client.js";
import {
  applyCalls,
  applyEvent,
  applyLanes,
  createModel,
  notice,
  unknownCalls,
  unknownLanes,
} from "./model.js";
import { createView } from "./view.js";
import { offersSteer, STEER_URI, steerOutcome, wireSendForm } from "./steer.js";

/** Local storage key for a token the person asked to remember (and only then). */
const TOKEN_KEY = "mur.door-token";
/** GET /ui/status at most this often while events arrive (tokens, lanes of new tasks). */
const STATUS_EVERY_MS = 1000;

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @param {string} key */
function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null; // storage disabled
  }
}

let client = new DoorClient(stored(TOKEN_KEY));
let model = createModel();
/** @type {Record<string, any> | null} */
let status = null;
/** @type {Watcher | null} */
let watcher = null;
let lastByteAt = 0;
let live = false;
let lostSince = /** @type {number | null} */ (null);

/** The agent card lists the steer extension (read once per session, steer.js). */
let steers = false;

/** @param {string} method */
const can = (method) => status !== null && status.scopes.includes(method);

/** A message id that needs no secure context (crypto.randomUUID does). */
function messageId() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return `msg-ui-${[...b].map((x) => x.toString(16).padStart(2, "0")).join("")}`;
}

const view = createView({
  can,
  async cancel(id) {
    await client.rpc("CancelTask", { id });
  },
  async answer(taskId, text) {
    await client.rpc("SendMessage", {
      message: { messageId: messageId(), role: "ROLE_USER", taskId, parts: [{ text }] },
      configuration: { returnImmediately: true },
    });
  },
  async approve(taskId, argumentsHash, approve, reason) {
    const data = { approve, argumentsHash, ...(reason ? { reason } : {}) };
    try {
      await client.rpc("SendMessage", {
        message: {
          messageId: messageId(),
          role: "ROLE_USER",
          taskId,
          parts: [{ data, mediaType: "application/json" }],
        },
        configuration: { returnImmediately: true },
      });
    } catch (e) {
      // A public door takes an approval only with the operator's approval token (the rest of it
      // needs none): the token form asks for it, and the page presents it from then on.
      const why = /** @type {Error} */ (e).message;
      if (client.token === null && /approval_token/.test(why)) {
        askToken(`Answering an approval on this door takes the operator's token. ${why}`);
      }
      throw e;
    }
  },
  async steer(taskId, text) {
    // No returnImmediately: the door answers once the task took the steer (or ended first).
    const result = await client.rpc("SendMessage", {
      message: {
        messageId: messageId(),
        role: "ROLE_USER",
        taskId,
        parts: [{ text }],
        metadata: { [STEER_URI]: {} },
      },
    });
    return steerOutcome(result);
  },
  steers: () => steers,
  image: (url) => client.image(url),
});

wireSendForm(/** @type {HTMLFormElement} */ ($("send")), async (text) => {
  const result = await client.rpc("SendMessage", {
    message: { messageId: messageId(), role: "ROLE_USER", parts: [{ text }] },
    configuration: { returnImmediately: true },
  });
  return String(result?.task?.id ?? "");
});

/** Reads the agent card: does it list the steer extension? Redraws the cards when it changed. */
async function readCard() {
  const offered = offersSteer(await client.card().catch(() => null));
  if (offered === steers) return;
  steers = offered;
  view.redrawAll(model);
}

/**
 * The first picture of the session waits for the stream to catch up with the newest event id the
 * first GET /ui/status named (`paintAt`): before that the page says it is loading, rather than
 * "No task yet" over a session that has tasks. It is drawn at once, not on an animation frame (a
 * headless browser may run none for a while), and marks `<body data-ready>`.
 */
let paintAt = /** @type {number | null} */ (null);
let painted = false;

function firstPaint() {
  if (painted || paintAt === null || model.lastId < paintAt) return;
  painted = true;
  $("loading").hidden = true;
  view.render(model);
  drawTitle();
  document.body.dataset.ready = "true";
}

let frameAsked = false;
function draw() {
  if (!painted) return firstPaint();
  if (frameAsked) return;
  frameAsked = true;
  requestAnimationFrame(() => {
    frameAsked = false;
    view.render(model);
    drawTitle();
  });
}

function drawTitle() {
  let asking = 0;
  for (const t of model.tasks.values()) if (t.prompt !== null) asking++;
  const name = status ? status.capsule.name : "mur";
  document.title = `${asking ? `(${asking} waiting) ` : ""}${name} · live session`;
}

function drawStatus() {
  if (!status) return;
  $("capsule").textContent =
    `${status.capsule.name} ${status.capsule.version} (${status.capsule.transport})`;
  $("session").textContent = status.sessionId;
  const t = status.tokens;
  $("tokens").textContent = `${t.used.toLocaleString("en")}` +
    (t.ceiling !== null ? ` of ${t.ceiling.toLocaleString("en")}` : "") + " used";
  $("tokens").dataset.used = String(t.used);
  $("forget").hidden = client.token === null;
  $("send").hidden = !can("SendMessage");
  // Tool sources down now (an MCP server, an OpenAPI service): the model goes without them.
  /** @type {{ kind: string, source: string, message: string }[]} */
  const down = status.sourceErrors ?? [];
  const list = $("sources");
  list.hidden = down.length === 0;
  list.replaceChildren(...down.map((e) => {
    const li = document.createElement("li");
    li.dataset.source = e.source;
    li.textContent = `${e.kind === "mcp" ? "MCP server" : "OpenAPI service"} ${e.source} ` +
      `unavailable: ${e.message}`;
    return li;
  }));
}

let statusAt = 0;
let statusTimer = /** @type {ReturnType<typeof setTimeout> | null} */ (null);
/** GET /ui/status now: new session? scopes, tokens, lanes of tasks not yet placed. */
async function refreshStatus() {
  statusAt = Date.now();
  const ask = unknownLanes(model).slice(0, 100);
  const askCalls = unknownCalls(model).slice(0, 100);
  const s = await client.status(ask, askCalls);
  if (status && s.sessionId !== status.sessionId) {
    // Same address, new session (the capsule was restarted): its ids start again at 1.
    model = createModel();
    view.reset();
    notice(model, "info", `a new session answers here now: ${s.sessionId}`, Date.now());
  }
  if (!status || s.sessionId !== status.sessionId) readCard();
  const scopesChanged = JSON.stringify(status?.scopes) !== JSON.stringify(s.scopes);
  status = s;
  applyLanes(model, ask, s.tasks);
  applyCalls(model, askCalls, s.calls ?? {});
  drawStatus();
  if (scopesChanged) view.redrawAll(model);
  draw();
}

/** Throttled refreshStatus while events flow. */
function statusSoon() {
  if (statusTimer !== null) return;
  const wait = Math.max(0, statusAt + STATUS_EVERY_MS - Date.now());
  statusTimer = setTimeout(() => {
    statusTimer = null;
    refreshStatus().catch(() => {/* the stream says what is wrong */});
  }, wait);
}

/** @param {{ kind: string, attempt: number, detail?: string, waitMs?: number }} s */
function onState(s) {
  const conn = $("conn");
  conn.dataset.kind = s.kind;
  const now = Date.now();
  // A stream that will not catch up (lost, ended, refused): draw what there is.
  if (s.kind !== "connecting" && s.kind !== "live" && paintAt !== null) {
    paintAt = Math.min(paintAt, model.lastId);
  }
  switch (s.kind) {
    case "connecting":
      conn.textContent = s.attempt ? `reconnecting (attempt ${s.attempt})…` : "connecting…";
      break;
    case "live":
      live = true;
      conn.textContent = "live";
      if (lostSince !== null) {
        notice(model, "connection", `reconnected; replaying from event id ${model.lastId}`, now);
        lostSince = null;
      }
      break;
    case "lost":
      if (live || lostSince === null) {
        if (lostSince === null) {
          notice(model, "connection", `connection lost after event id ${model.lastId}`, now);
        }
        lostSince = now;
      }
      live = false;
      conn.textContent = s.waitMs !== undefined
        ? `lost — reconnecting in ${(s.waitMs / 1000).toFixed(1)} s`
        : "lost";
      break;
    case "closed":
      live = false;
      conn.textContent = "capsule closed the stream";
      break;
    case "ended":
      // The stream's last words: the session is over, nothing will answer a reconnect.
      live = false;
      conn.dataset.status = s.detail ?? "";
      conn.textContent = `session ended: status ${s.detail}`;
      notice(model, "info", `the session ended: status ${s.detail}`, now);
      break;
    case "auth":
      live = false;
      conn.textContent = "token refused";
      askToken(s.detail ?? "the door refused the token");
      break;
  }
  draw();
}

function watch() {
  watcher?.stop();
  const w = new Watcher(client, {
    lastId: () => model.lastId,
    onEvent(id, data) {
      const frame = applyEvent(model, id, data, Date.now());
      if (id !== null) statusSoon();
      draw();
      return frame;
    },
    onBytes() {
      lastByteAt = Date.now();
    },
    onState,
    // Each reconnect first asks who answers now (a restarted capsule is a new session).
    beforeConnect: () => (status === null ? Promise.resolve() : refreshStatus()),
  });
  watcher = w;
  w.run();
}

/** @param {string | null} why */
function askToken(why) {
  watcher?.stop();
  watcher = null;
  const form = /** @type {HTMLFormElement} */ ($("login"));
  form.hidden = false;
  if (why) $("login-why").textContent = why;
  /** @type {HTMLInputElement} */ ($("token")).focus();
}

async function start() {
  try {
    await refreshStatus();
    paintAt ??= status?.lastId ?? 0;
  } catch (e) {
    if (e instanceof AuthError) {
      // A remembered token the door refuses is forgotten: it belonged to another session.
      if (client.token !== null && stored(TOKEN_KEY) === client.token) {
        localStorage.removeItem(TOKEN_KEY);
      }
      const first = client.token === null && e.status === 401;
      askToken(first ? null : `The door refused that token: ${e.message}`);
      return;
    }
    onState({ kind: "lost", attempt: 1, detail: String(/** @type {Error} */ (e).message) });
    setTimeout(start, 2000);
    return;
  }
  $("login").hidden = true;
  watch();
}

$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($("token"));
  const token = input.value.trim();
  if (!token) return;
  input.value = "";
  const remember = /** @type {HTMLInputElement} */ ($("remember")).checked;
  try {
    if (remember) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch { /* storage disabled: the token stays in this tab */ }
  client = new DoorClient(token);
  start();
});

$("forget").addEventListener("click", () => {
  try {
    localStorage.removeItem(TOKEN_KEY);
  } catch { /* storage disabled */ }
  client = new DoorClient(null);
  status = null;
  $("forget").hidden = true;
  askToken("Token forgotten. Paste a token to follow the session again.");
});

setInterval(() => {
  const now = Date.now();
  const hb = status?.heartbeatMs ?? 15000;
  const el = $("lastbyte");
  if (lastByteAt === 0) {
    el.textContent = "—";
    el.dataset.health = "unknown";
  } else {
    const age = now - lastByteAt;
    el.textContent = `${Math.floor(age / 1000)} s ago`;
    // A heartbeat comes every `hb` ms: past two of them the capsule is not being scheduled
    // (docs/protocol.md "Heartbeat"), though it may still be there.
    el.dataset.health = !live
      ? "unknown"
      : age <= hb + 2000
      ? "ok"
      : age <= 2 * hb + 2000
      ? "late"
      : "stalled";
    el.title = el.dataset.health === "stalled"
      ? "no byte for over two heartbeats: the capsule may be suspended or overloaded"
      : "";
  }
  view.tick(now);
}, 1000);

start();
