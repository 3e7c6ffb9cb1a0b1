/**
 * The conversation record of a context: `<session folder>/conversation/<context id>.json` (the
 * workdir itself unless `--workdir` was given, src/session/workdir.ts), the task's
 * messages as the driver last saw them. Rewritten after every turn, so a session killed mid-task
 * still leaves its conversation behind, and `mur run --resume` loads it (even when the capsule
 * is `stateless`, as the reference does).
 */
import type { ConversationMessage } from "../drivers/types.ts";

export function recordPath(sessionDir: string, contextId: string): string {
  return `${sessionDir}/conversation/${contextId}.json`;
}

/** Best effort: a record that cannot be written costs a resume its history, nothing else. */
export function saveConversation(
  sessionDir: string,
  contextId: string,
  messages: ConversationMessage[],
): void {
  try {
    Deno.mkdirSync(`${sessionDir}/conversation`, { recursive: true });
    const path = recordPath(sessionDir, contextId);
    Deno.writeTextFileSync(`${path}.tmp`, JSON.stringify({ messages }));
    Deno.renameSync(`${path}.tmp`, path);
  } catch {
    // see above
  }
}

/** The recorded messages, or null when the context has no (readable) record. */
export function loadConversation(
  sessionDir: string,
  contextId: string,
): ConversationMessage[] | null {
  try {
    const doc = JSON.parse(Deno.readTextFileSync(recordPath(sessionDir, contextId)));
    return Array.isArray(doc?.messages) ? doc.messages as ConversationMessage[] : null;
  } catch {
    return null;
  }
}
