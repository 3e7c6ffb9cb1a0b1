/**
 * A task card's approval controls (docs/live-page.md "Approvals"): when the task waits for a
 * tool call's approval (its INPUT_REQUIRED status carries the `approval` data part, model.js),
 * the card shows the call as a person reads it with Approve and Deny (and an optional reason for
 * the model), and answers with `{approve, argumentsHash, reason?}` (docs/approvals.md "The
 * wire"). The door takes the answer only from the operator's token; a refusal is shown on the
 * card and changes nothing.
 */
import { h } from "./view.js";

/**
 * @typedef {import("./model.js").Approval} Approval
 * @typedef {(taskId: string, argumentsHash: string, approve: boolean, reason: string) =>
 *   Promise<void>} AnswerApproval
 */

export class ApprovalForm {
  /**
   * @param {string} taskId
   * @param {AnswerApproval} answer
   * @param {(text: string | null) => void} showError
   */
  constructor(taskId, answer, showError) {
    this.taskId = taskId;
    this.answerApproval = answer;
    this.showError = showError;
    /** @type {string | null} */
    this.hash = null;
    this.tool = h("strong", { class: "approval-tool" });
    this.what = h("code", { class: "approval-what" });
    this.rule = h("p", { class: "approval-rule" });
    this.reason = /** @type {HTMLInputElement} */ (h("input", {
      type: "text",
      id: `deny-reason-${taskId}`,
      class: "deny-reason",
      placeholder: "why, for the agent (optional)",
    }));
    this.approveButton = h("button", {
      type: "button",
      class: "approve",
      onclick: () => this.send(true),
    }, "Approve");
    this.denyButton = h("button", {
      type: "button",
      class: "deny",
      onclick: () => this.send(false),
    }, "Deny");
    this.el = h(
      "section",
      { class: "approval", hidden: true, "aria-label": "a tool call waiting for approval" },
      h("p", {}, h("span", { class: "prompt-label" }, "Approve "), this.tool, ": ", this.what, "?"),
      this.rule,
      h(
        "div",
        { class: "approval-actions" },
        this.approveButton,
        this.denyButton,
        h("label", { for: `deny-reason-${taskId}` }, "Reason"),
        this.reason,
      ),
    );
  }

  /**
   * Shown while `approval` waits and the token may send a message.
   * @param {Approval | null} approval
   * @param {boolean} canSend
   */
  update(approval, canSend) {
    const show = approval !== null && canSend;
    if (show && approval.argumentsHash !== this.hash) {
      // Another call waits now: fresh controls for it.
      this.hash = approval.argumentsHash;
      this.reason.value = "";
      this.approveButton.removeAttribute("disabled");
      this.denyButton.removeAttribute("disabled");
    }
    if (!show) this.hash = null;
    this.el.hidden = !show;
    if (!approval) return;
    this.tool.textContent = approval.tool;
    this.what.textContent = whatOf(approval);
    this.rule.textContent = approval.reason ? `asked by ${approval.reason}` : "";
  }

  /** @param {boolean} approve */
  async send(approve) {
    if (this.hash === null) return;
    this.approveButton.setAttribute("disabled", "");
    this.denyButton.setAttribute("disabled", "");
    try {
      await this.answerApproval(this.taskId, this.hash, approve, this.reason.value.trim());
      this.showError(null);
    } catch (err) {
      this.approveButton.removeAttribute("disabled");
      this.denyButton.removeAttribute("disabled");
      this.showError(
        `the ${approve ? "approval" : "denial"} was not taken: ${
          /** @type {Error} */ (err).message
        }`,
      );
    }
  }
}

/**
 * The call as a person reads it: a shell command line, else its arguments as JSON.
 * @param {Approval} a
 */
function whatOf(a) {
  const cmd = a.arguments?.command;
  if (typeof cmd === "string") return cmd;
  return a.arguments ? JSON.stringify(a.arguments) : (a.argumentsPreview ?? "");
}
