/**
 * The live page's DOM, drawn from the model (model.js). Nothing is drawn per event: app.js calls
 * `render` at most once per animation frame, and only the tasks the model marked dirty are
 * touched. Each item keeps its element and the model revision it shows, so streaming text is
 * appended to one text node and a tool's byte count changes one span. The DOM holds what the
 * model holds and no more (bounded; see model.js).
 */
import { isTerminal, stateWord } from "./model.js";
import { ApprovalForm } from "./approval.js";
import { SteerForm } from "./steer.js";

/**
 * @typedef {import("./model.js").SessionModel} SessionModel
 * @typedef {import("./model.js").Task} Task
 * @typedef {import("./model.js").Item} Item
 * @typedef {{
 *   cancel: (taskId: string) => Promise<void>,
 *   answer: (taskId: string, text: string) => Promise<void>,
 *   approve: import("./approval.js").AnswerApproval,
 *   steer: import("./steer.js").SendSteer,
 *   steers: () => boolean,
 *   image: (url: string) => Promise<string>,
 *   can: (method: string) => boolean,
 * }} Actions
 */

/**
 * A new element: `h("li", {class: "item"}, child, …)`. Attributes starting with `on` are
 * listeners; strings become text nodes.
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @param {(Node | string | null)[]} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = String(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null) el.append(c);
  return el;
}

/** @param {number} n */
export function bytes(n) {
  if (n < 1024) return `${n.toLocaleString("en")} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** @param {number} ms */
export function ago(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * A short, still unique-looking form of a `tsk_` or `ctx_` id.
 * @param {string} id
 */
function shortId(id) {
  return id.length > 14 ? `${id.slice(0, 6)}…${id.slice(-6)}` : id;
}

/** @param {Item} item @param {Actions} actions */
function itemView(item, actions) {
  switch (item.kind) {
    case "text": {
      const node = document.createTextNode("");
      const el = h("li", { class: "item text" }, h("div", { class: "text-body" }, node));
      return new TextView(el, node);
    }
    case "thinking": {
      const node = document.createTextNode("");
      const summary = h("summary", {}, "thinking");
      const el = h(
        "li",
        { class: "item thinking" },
        h("details", {}, summary, h("div", { class: "thinking-body" }, node)),
      );
      return new TextView(el, node, summary);
    }
    case "tool":
      return new ToolView(actions);
    case "status":
      return new FixedView(
        h(
          "li",
          { class: "item status", "data-state": stateWord(item.state) },
          item.text ||
            stateWord(item.state),
        ),
      );
    case "suggestion":
      return new FixedView(h("li", { class: "item suggestion" }, `suggested next: ${item.text}`));
  }
}

/**
 * A call's input as a person reads it: the `command` of a shell call, else the JSON as sent.
 * @param {string} json
 */
export function commandOf(json) {
  try {
    const v = JSON.parse(json);
    if (v && typeof v === "object" && typeof v.command === "string") return v.command;
  } catch { /* cut short (over 2,000 characters): shown as it is */ }
  return json;
}

class FixedView {
  /** @param {HTMLElement} el */
  constructor(el) {
    this.el = el;
    this.rev = -1;
  }
  update() {}
}

class TextView {
  /** @param {HTMLElement} el @param {Text} node @param {HTMLElement} [summary] */
  constructor(el, node, summary) {
    this.el = el;
    this.node = node;
    this.summary = summary;
    this.rev = -1;
    this.cut = 0;
    this.len = 0;
  }
  /** @param {import("./model.js").TextItem} item */
  update(item) {
    if (item.cut === this.cut && item.text.length >= this.len) {
      this.node.appendData(item.text.slice(this.len));
    } else {
      this.node.data = item.text;
    }
    this.cut = item.cut;
    this.len = item.text.length;
    this.el.classList.toggle("open", item.open);
    const total = item.cut + item.text.length;
    const cut = item.cut > 0 ? ` (the first ${item.cut.toLocaleString("en")} not shown)` : "";
    if (this.summary) {
      this.summary.textContent = `thinking · ${total.toLocaleString("en")} characters${cut}`;
    } else if (item.cut > 0) {
      this.el.dataset.cut = `${item.cut.toLocaleString("en")} earlier characters not shown`;
    }
  }
}

class ToolView {
  /** @param {Actions} actions */
  constructor(actions) {
    this.actions = actions;
    this.rev = -1;
    this.name = h("span", { class: "tool-name" });
    // What the call was given: a shell command as it ran, else its input as JSON.
    this.input = h("code", { class: "tool-input", hidden: true });
    this.meta = h("span", { class: "tool-meta" });
    this.output = h("div", { class: "tool-output" });
    this.el = h(
      "li",
      { class: "item tool" },
      h("div", { class: "tool-head" }, this.name, this.input, this.meta),
      this.output,
    );
    this.startedAt = 0;
    this.bytes = /** @type {number | null} */ (null);
    this.done = false;
    /** @type {string[]} */
    this.urls = [];
  }

  /** @param {import("./model.js").ToolItem} item */
  update(item) {
    this.name.textContent = item.toolName;
    this.el.dataset.call = item.toolCallId ?? "";
    this.startedAt = item.startedAt;
    this.bytes = item.inputBytes;
    if (typeof item.input === "string") {
      this.input.hidden = false;
      this.input.textContent = commandOf(item.input);
    }
    const a = item.artifact;
    if (!a) {
      this.el.dataset.running = "";
      this.tick(Date.now());
      return;
    }
    if (this.done) return;
    this.done = true;
    delete this.el.dataset.running;
    this.el.classList.toggle("error", a.isError);
    const facts = [];
    if (a.exitCode !== null) facts.push(`exit ${a.exitCode}`);
    if (a.durationMs !== null) facts.push(`${a.durationMs.toLocaleString("en")} ms`);
    if (item.inputBytes !== null) facts.push(`input ${bytes(item.inputBytes)}`);
    if (a.truncated) facts.push("truncated");
    if (a.isError) facts.push("error");
    this.meta.textContent = facts.join(" · ");
    const size = new TextEncoder().encode(a.content).length;
    const pre = h("pre", { class: "tool-content" });
    const details = h(
      "details",
      {
        // Filled when first opened: a folded result costs one element, whatever its size.
        ontoggle: () => {
          if (/** @type {HTMLDetailsElement} */ (details).open && !pre.textContent) {
            pre.textContent = a.content;
          }
        },
      },
      h("summary", {}, `result · ${bytes(size)}`),
      pre,
    );
    this.output.append(details);
    if (a.attachments.length) {
      const box = h("div", { class: "attachments" });
      for (const att of a.attachments) {
        const img = /** @type {HTMLImageElement} */ (h("img", {
          alt: `${att.mediaType} attachment, ${bytes(att.sizeBytes)}`,
          "data-sha256": att.sha256,
        }));
        box.append(
          h("figure", {}, img, h("figcaption", {}, `${att.mediaType}, ${bytes(att.sizeBytes)}`)),
        );
        this.actions.image(att.url).then((u) => {
          this.urls.push(u);
          img.src = u;
        }, (e) => {
          img.alt = `image could not be fetched: ${e.message}`;
        });
      }
      this.output.append(box);
    }
  }

  /** @param {number} now */
  tick(now) {
    if (this.done) return;
    const written = this.bytes === null ? "writing input" : `input ${bytes(this.bytes)}`;
    this.meta.textContent = `${written} · running ${ago(now - this.startedAt)}`;
  }

  dispose() {
    for (const u of this.urls) URL.revokeObjectURL(u);
  }
}

class TaskCard {
  /** @param {Task} t @param {Actions} actions */
  constructor(t, actions) {
    this.actions = actions;
    this.id = t.id;
    const headingId = `task-${t.id}`;
    this.state = h("span", { class: "state" });
    this.meta = h("p", { class: "task-meta" });
    // What the task was asked (GET /ui/status `request`), above what it did.
    this.request = h("blockquote", { class: "task-request", hidden: true });
    this.message = h("p", { class: "task-message" });
    this.dropped = h("p", { class: "dropped", hidden: true });
    this.list = h("ol", { class: "items", "aria-label": "what the task did" });
    this.cancel = h("button", {
      type: "button",
      class: "cancel",
      "aria-label": `Cancel task ${t.id}`,
      onclick: () => this.doCancel(),
    }, "Cancel task");
    this.error = h("p", { class: "task-error", role: "alert", hidden: true });
    this.promptText = h("span", { class: "prompt-text" });
    this.answerBox = /** @type {HTMLTextAreaElement} */ (h("textarea", {
      id: `answer-${t.id}`,
      rows: 2,
      required: true,
    }));
    this.answerButton = h("button", { type: "submit" }, "Send answer");
    this.answer = /** @type {HTMLFormElement} */ (h(
      "form",
      { class: "answer", hidden: true, onsubmit: (/** @type {Event} */ e) => this.doAnswer(e) },
      h(
        "label",
        { for: `answer-${t.id}` },
        h("span", { class: "prompt-label" }, "The agent asks: "),
        this.promptText,
      ),
      this.answerBox,
      this.answerButton,
    ));
    this.answerBox.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) this.answer.requestSubmit();
    });
    this.approval = new ApprovalForm(t.id, actions.approve, (text) => this.showError(text));
    this.steer = new SteerForm(t.id, actions.steer, (text) => this.showError(text));
    this.responseBody = h("div", { class: "response-body" });
    this.response = h(
      "section",
      { class: "response", hidden: true, "aria-label": "the task's answer" },
      h("h3", {}, "Answer"),
      this.responseBody,
    );
    this.filesList = h("ul", { class: "files-list" });
    this.files = h(
      "section",
      { class: "files", hidden: true, "aria-label": "files the task published" },
      h("h3", {}, "Files"),
      this.filesList,
    );
    this.el = h(
      "article",
      { class: "task", "aria-labelledby": headingId, "data-task": t.id },
      h(
        "header",
        { class: "task-head" },
        h("h2", { id: headingId }, this.state, " ", h("code", { title: t.id }, shortId(t.id))),
        this.cancel,
      ),
      this.meta,
      this.request,
      this.message,
      this.dropped,
      this.list,
      this.answer,
      this.approval.el,
      this.steer.el,
      this.response,
      this.files,
      this.error,
    );
    /** @type {{ key: number, view: any }[]} */
    this.items = [];
    this.rev = -1;
  }

  /** @param {Task} t */
  update(t) {
    const word = stateWord(t.state);
    this.state.textContent = word;
    this.state.dataset.state = word;
    this.el.dataset.state = word;
    const meta = [
      t.lane ? `${t.lane} lane` : null,
      t.origin ? `origin ${t.origin}` : null,
      t.turn ? `turn ${t.turn}` : null,
      t.reopens ? `reopened ${t.reopens}×` : null,
      `context ${shortId(t.contextId)}`,
    ].filter(Boolean);
    this.meta.textContent = meta.join(" · ");
    this.request.hidden = t.request === null;
    this.request.textContent = t.request ?? "";
    this.message.textContent = t.message;
    this.dropped.hidden = t.dropped === 0;
    this.dropped.textContent = `${t.dropped.toLocaleString("en")} earlier item${
      t.dropped === 1 ? "" : "s"
    } not shown (the full record is in the session's trace.jsonl)`;
    this.syncItems(t);
    this.cancel.hidden = isTerminal(t.state) || !this.actions.can("CancelTask");
    // An approval is answered by its own controls, not the answer box (approval.js).
    this.approval.update(t.approval, this.actions.can("SendMessage"));
    // A steer goes only to a working task, and only where the card lists the extension.
    this.steer.update(
      t.state === "TASK_STATE_WORKING" && this.actions.steers() &&
        this.actions.can("SendMessage"),
    );
    const asking = t.prompt !== null && t.approval === null && this.actions.can("SendMessage");
    if (asking && this.answer.hidden) this.answerButton.removeAttribute("disabled");
    this.answer.hidden = !asking;
    this.promptText.textContent = t.prompt ?? "";
    this.response.hidden = t.response === null;
    if (t.response !== null) this.responseBody.textContent = t.response;
    this.files.hidden = t.files.length === 0;
    // Files only arrive: add the ones not shown yet.
    for (const f of t.files.slice(this.filesList.children.length)) {
      this.filesList.append(h("li", {}, fileLink(f, this.actions)));
    }
  }

  /** @param {Task} t */
  syncItems(t) {
    // Items leave only from the front and arrive only at the back (model.js `push`).
    const firstKey = t.items.length ? t.items[0].key : Infinity;
    while (this.items.length && this.items[0].key < firstKey) {
      const gone = /** @type {{ view: any }} */ (this.items.shift());
      gone.view.el.remove();
      gone.view.dispose?.();
    }
    for (let i = 0; i < t.items.length; i++) {
      const item = t.items[i];
      let r = this.items[i];
      if (!r) {
        r = { key: item.key, view: itemView(item, this.actions) };
        this.items.push(r);
        this.list.append(r.view.el);
      }
      if (r.view.rev !== item.rev) {
        r.view.update(item);
        r.view.rev = item.rev;
      }
    }
  }

  /** @param {number} now */
  tick(now) {
    for (const r of this.items) if (r.view instanceof ToolView) r.view.tick(now);
  }

  async doCancel() {
    this.cancel.setAttribute("disabled", "");
    try {
      await this.actions.cancel(this.id);
      this.showError(null);
    } catch (e) {
      this.showError(`cancel failed: ${/** @type {Error} */ (e).message}`);
    } finally {
      this.cancel.removeAttribute("disabled");
    }
  }

  /** @param {Event} e */
  async doAnswer(e) {
    e.preventDefault();
    const text = this.answerBox.value.trim();
    if (!text) return;
    this.answerButton.setAttribute("disabled", "");
    try {
      await this.actions.answer(this.id, text);
      this.answerBox.value = "";
      this.showError(null);
    } catch (err) {
      this.answerButton.removeAttribute("disabled");
      this.showError(`the answer was not taken: ${/** @type {Error} */ (err).message}`);
    }
  }

  /** @param {string | null} text */
  showError(text) {
    this.error.hidden = text === null;
    this.error.textContent = text ?? "";
  }

  dispose() {
    for (const r of this.items) r.view.dispose?.();
    this.el.remove();
  }
}

/**
 * @param {Actions} actions
 */
export function createView(actions) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
  const tasksEl = $("tasks");
  const noticesEl = $("notices");
  /** @type {Map<string, TaskCard>} */
  const cards = new Map();
  /** @type {Map<number, HTMLElement>} */
  const notices = new Map();
  let droppedTasks = /** @type {HTMLElement | null} */ (null);

  return {
    /** @param {SessionModel} m */
    render(m) {
      for (const id of m.dirty) {
        const t = m.tasks.get(id);
        if (!t) continue;
        let card = cards.get(id);
        if (!card) {
          card = new TaskCard(t, actions);
          cards.set(id, card);
          tasksEl.prepend(card.el); // newest task first
        }
        if (card.rev !== t.rev) {
          card.update(t);
          card.rev = t.rev;
        }
      }
      m.dirty.clear();
      if (!m.sessionDirty) return;
      m.sessionDirty = false;
      for (const [id, card] of cards) {
        if (!m.tasks.has(id)) {
          card.dispose();
          cards.delete(id);
        }
      }
      if (m.droppedTasks > 0) {
        droppedTasks ??= tasksEl.parentElement?.appendChild(h("p", { class: "dropped" })) ?? null;
        if (droppedTasks) {
          droppedTasks.textContent = `${m.droppedTasks.toLocaleString("en")} earlier task${
            m.droppedTasks === 1 ? "" : "s"
          } not shown`;
        }
      }
      $("empty").hidden = m.tasks.size > 0;
      $("events").textContent = `${m.received.toLocaleString("en")} received` +
        (m.lost ? `, ${m.lost.toLocaleString("en")} lost` : "") + ` · last id ${m.lastId}`;
      $("events").dataset.lost = String(m.lost);
      $("events").dataset.received = String(m.received);
      $("events").dataset.lastId = String(m.lastId);
      $("events").dataset.duplicates = String(m.duplicates);
      const keep = new Set(m.notices.map((n) => n.key));
      for (const [key, el] of notices) {
        if (!keep.has(key)) {
          el.remove();
          notices.delete(key);
        }
      }
      for (const n of m.notices) {
        if (notices.has(n.key)) continue;
        const el = h(
          "li",
          { class: "notice", "data-kind": n.kind },
          h("time", {}, new Date(n.at).toLocaleTimeString()),
          " ",
          h("span", { class: "notice-text" }, n.text),
        );
        notices.set(n.key, el);
        noticesEl.append(el);
      }
      const quota = $("quota");
      quota.hidden = m.quota.size === 0;
      quota.replaceChildren(
        ...[...m.quota.values()].map((w) => {
          const parts = [w.name];
          if (typeof w.used === "number") parts.push(`${Math.round(w.used * 100)} % used`);
          if (w.state) parts.push(w.state);
          if (typeof w.resetsAtMs === "number") {
            parts.push(`resets ${new Date(w.resetsAtMs).toLocaleString()}`);
          }
          return h("li", { "data-state": w.state ?? "" }, parts.join(" · "));
        }),
      );
    },

    /** Once a second: running tools' clocks. @param {number} now */
    tick(now) {
      for (const card of cards.values()) card.tick(now);
    },

    /** Forgets every card and notice (a new session answers at this address). */
    reset() {
      for (const card of cards.values()) card.dispose();
      cards.clear();
      for (const el of notices.values()) el.remove();
      notices.clear();
      droppedTasks?.remove();
      droppedTasks = null;
    },

    /** Controls depend on scopes: redraw every card after they changed. @param {SessionModel} m */
    redrawAll(m) {
      for (const [id, card] of cards) {
        const t = m.tasks.get(id);
        if (t) card.update(t);
      }
    },
  };
}

/**
 * A download link for a published file (docs/protocol.md "Files and data"): inline bytes become a
 * Blob at once; a `url` file is fetched with the page's token when clicked (an `<a href>` cannot
 * carry it); data is offered as a JSON file.
 * @param {import("./model.js").Published} f
 * @param {Actions} actions
 */
function fileLink(f, actions) {
  const a = /** @type {HTMLAnchorElement} */ (h("a", { download: f.name, href: "#" }, f.name));
  const label = h("span", { class: "file-type" }, ` ${f.mediaType}`);
  if (f.raw !== null) {
    const bin = atob(f.raw);
    const data = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) data[i] = bin.charCodeAt(i);
    a.href = URL.createObjectURL(new Blob([data], { type: f.mediaType }));
    label.textContent += ` · ${bytes(data.length)}`;
  } else if (f.path === null) {
    a.href = URL.createObjectURL(
      new Blob([JSON.stringify(f.data, null, 2)], { type: "application/json" }),
    );
    a.download = `${f.name}.json`;
  } else {
    const path = f.path;
    a.dataset.path = path;
    a.addEventListener("click", (e) => {
      if (a.dataset.ready) return;
      e.preventDefault();
      actions.image(path).then((u) => {
        a.href = u;
        a.dataset.ready = "1";
        a.click();
      }, (err) => {
        a.title = `could not be fetched: ${err.message}`;
      });
    });
  }
  return h("span", {}, a, label);
}
