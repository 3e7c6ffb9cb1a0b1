/**
 * Sending to the session from the live page (docs/live-page.md "Sending and steering"): the box
 * that sends a new task (SendMessage without a taskId, `returnImmediately`), shown while the token
 * may SendMessage, and a WORKING task's steer box, shown only when the agent card lists the steer
 * extension (docs/approvals.md "Steering"). A steer's answer comes once the task reaches its next
 * turn boundary and is shown under the box: taken before turn n, or not taken and why.
 */
import { h } from "./view.js";

/** The steer extension's URI, as the card lists it (src/events/frames.ts STEER_URI). */
export const STEER_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-steer-v1";

/**
 * The card lists the steer extension.
 * @param {any} card
 */
export function offersSteer(card) {
  const exts = card?.capabilities?.extensions;
  return Array.isArray(exts) && exts.some((e) => e?.uri === STEER_URI);
}

/**
 * The door's answer to a steer as a person reads it: its text part.
 * @param {any} result
 */
export function steerOutcome(result) {
  const parts = result?.message?.parts;
  const text = Array.isArray(parts) ? parts.find((p) => typeof p?.text === "string")?.text : null;
  return text ?? "the steer was sent";
}

/**
 * @typedef {(taskId: string, text: string) => Promise<string>} SendSteer
 */

export class SteerForm {
  /**
   * @param {string} taskId
   * @param {SendSteer} steer
   * @param {(text: string | null) => void} showError
   */
  constructor(taskId, steer, showError) {
    this.taskId = taskId;
    this.sendSteer = steer;
    this.showError = showError;
    this.box = /** @type {HTMLInputElement} */ (h("input", {
      type: "text",
      id: `steer-${taskId}`,
      class: "steer-text",
      required: true,
      placeholder: "read by the task before its next model call",
    }));
    this.button = h("button", { type: "submit" }, "Steer");
    this.outcome = h("p", { class: "steer-outcome", role: "status" });
    this.label = h("label", { for: `steer-${taskId}` }, "Steer");
    this.el = /** @type {HTMLFormElement} */ (h(
      "form",
      {
        class: "steer",
        hidden: true,
        onsubmit: (/** @type {Event} */ e) => this.send(e),
      },
      this.label,
      this.box,
      this.button,
      this.outcome,
    ));
  }

  /** @param {boolean} show */
  update(show) {
    // The last outcome stays readable after the task moved on.
    this.el.hidden = !show && this.outcome.textContent === "";
    this.label.hidden = !show;
    this.box.hidden = !show;
    this.button.hidden = !show;
  }

  /** @param {Event} e */
  async send(e) {
    e.preventDefault();
    const text = this.box.value.trim();
    if (!text) return;
    this.button.setAttribute("disabled", "");
    this.box.value = "";
    this.outcome.textContent = "steer sent: the task reads it at its next turn boundary";
    try {
      this.outcome.textContent = await this.sendSteer(this.taskId, text);
      this.showError(null);
    } catch (err) {
      this.outcome.textContent = "";
      this.showError(`the steer was not taken: ${/** @type {Error} */ (err).message}`);
    } finally {
      this.button.removeAttribute("disabled");
    }
  }
}

/**
 * The page's "new task" box (index.html `#send`).
 * @param {HTMLFormElement} form
 * @param {(text: string) => Promise<string>} send the new task's id
 */
export function wireSendForm(form, send) {
  const box = /** @type {HTMLTextAreaElement} */ (form.querySelector("textarea"));
  const button = /** @type {HTMLButtonElement} */ (form.querySelector("button"));
  const said = /** @type {HTMLElement} */ (form.querySelector(".send-outcome"));
  box.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) form.requestSubmit();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = box.value.trim();
    if (!text) return;
    button.disabled = true;
    try {
      const id = await send(text);
      box.value = "";
      said.dataset.task = id;
      said.textContent = `sent: task ${id}`;
    } catch (err) {
      delete said.dataset.task;
      said.textContent = `the task was not sent: ${/** @type {Error} */ (err).message}`;
    } finally {
      button.disabled = false;
    }
  });
}
