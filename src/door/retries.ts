/**
 * A retried send is not a second task (docs/door.md): a client that lost the answer to a
 * `SendMessage` or `SendStreamingMessage` (a network cut, a proxy timeout) sends the same message
 * again, with the same `messageId`. The door remembers which task each caller's message went to and
 * answers a repeat with that task instead of starting the work again. A caller is a credential on
 * an authenticated door; on a public door every client is one caller (A2A asks clients for unique
 * message ids). A repeat with other content (an edited example resent with its old id) is not a
 * retry: the door refuses it naming the first task (send.ts). The memory holds the last `capacity`
 * messages the door took, oldest forgotten first: that is the retry window. `network.retried_sends: new_task` turns the rule off (every send
 * starts its own task, as the conformance kit expects: docs/door.md); the memory of who
 * started which task is kept either way, for callers that see only their own tasks.
 */
export const RETRY_WINDOW = 10_000;

export class SeenMessages {
  /**
   * `caller \0 messageId` → task id and the message's fingerprint (message_fingerprint.ts), in
   * the order taken (a Map keeps insertion order).
   */
  #taken = new Map<string, { taskId: string; fingerprint: number }>();
  /** task id → the caller that started it, for callers that see only their own tasks. */
  #starter = new Map<string, string>();

  constructor(
    /** false (`retried_sends: new_task`): no send is a retry, every one starts its own task. */
    private readonly replay = true,
    private readonly capacity = RETRY_WINDOW,
  ) {}

  /**
   * The task an earlier message of this caller with this id went to, and that message's
   * fingerprint, if still remembered.
   */
  taskOf(
    caller: string,
    messageId: string,
  ): { taskId: string; fingerprint: number } | undefined {
    if (!this.replay) return undefined;
    return this.#taken.get(`${caller}\0${messageId}`);
  }

  /** A message was taken: a new task, or a reply delivered to a waiting one. */
  took(caller: string, messageId: string, taskId: string, fingerprint: number): void {
    const key = `${caller}\0${messageId}`;
    this.#taken.delete(key);
    this.#taken.set(key, { taskId, fingerprint });
    if (this.#taken.size > this.capacity) {
      this.#taken.delete(this.#taken.keys().next().value!);
    }
    if (!this.#starter.has(taskId)) this.#starter.set(taskId, caller);
    if (this.#starter.size > this.capacity) {
      this.#starter.delete(this.#starter.keys().next().value!);
    }
  }

  /** The caller whose message started `taskId`, while remembered. */
  starterOf(taskId: string): string | undefined {
    return this.#starter.get(taskId);
  }
}
