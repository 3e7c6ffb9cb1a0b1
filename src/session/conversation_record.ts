/**
 * The conversation record of a context: `<session folder>/conversation/<context id>.jsonl` (the
 * workdir itself unless `--workdir` was given, src/session/workdir.ts), one message per line, in
 * order (docs/running.md "Files"). It is saved after every turn, so a session killed mid-task still
 * leaves its conversation behind, and `mur run --resume` loads it (even when the capsule is
 * `stateless`; docs/hooks.md "Resuming a session").
 *
 * Append-only, so a turn's cost does not grow with the history
 * (BENCHMARKS.md "Scale: cost per unit of work"): a save writes only the messages added since
 * the last save of that context. When the history was rewritten instead (compaction, a new
 * task's seeded prefix) the whole file is replaced
 * atomically. A kill mid-append can leave a torn last line: loading ignores it and says so.
 * Records of older versions (`<context id>.json`, `{messages}` rewritten whole) still load.
 */
import type { ConversationMessage } from "../drivers/types.ts";

export function recordPath(sessionDir: string, contextId: string): string {
  return `${sessionDir}/conversation/${contextId}.jsonl`;
}

/** The older, rewritten-whole form: read by `--resume`, never written. */
function legacyPath(sessionDir: string, contextId: string): string {
  return `${sessionDir}/conversation/${contextId}.json`;
}

/**
 * What is on disk for each record this process writes: how many messages, the first and last of
 * them (a message is never changed once in a conversation, so the same objects at both ends mean
 * the history only grew), and the file's size (a record removed or cut by someone else is written
 * whole again rather than appended to).
 */
const written = new Map<
  string,
  { count: number; first: unknown; last: unknown; bytes: number }
>();

const enc = new TextEncoder();
const line = (m: ConversationMessage) => JSON.stringify(m) + "\n";

function sizeOf(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return -1;
  }
}

/** Best effort: a record that cannot be written costs a resume its history, nothing else. */
export function saveConversation(
  sessionDir: string,
  contextId: string,
  messages: ConversationMessage[],
): void {
  const path = recordPath(sessionDir, contextId);
  const was = written.get(path);
  try {
    const grew = was !== undefined && messages.length >= was.count &&
      (was.count === 0 ||
        (messages[0] === was.first && messages[was.count - 1] === was.last)) &&
      sizeOf(path) === was.bytes;
    let bytes: number;
    if (grew) {
      bytes = was.bytes;
      if (messages.length > was.count) {
        const text = enc.encode(messages.slice(was.count).map(line).join(""));
        Deno.writeFileSync(path, text, { append: true });
        bytes += text.length;
      }
    } else {
      Deno.mkdirSync(`${sessionDir}/conversation`, { recursive: true });
      const text = enc.encode(messages.map(line).join(""));
      Deno.writeFileSync(`${path}.tmp`, text);
      Deno.renameSync(`${path}.tmp`, path);
      bytes = text.length;
    }
    written.set(path, {
      count: messages.length,
      first: messages[0],
      last: messages[messages.length - 1],
      bytes,
    });
  } catch {
    // see above; the next save rewrites the whole record
    written.delete(path);
  }
}

export interface LoadedConversation {
  messages: ConversationMessage[];
  /** A last line cut by a kill mid-write, ignored (its first bytes, for the report). */
  torn: string | null;
}

/** The recorded messages, or null when the context has no (readable) record. */
export function loadConversation(
  sessionDir: string,
  contextId: string,
): LoadedConversation | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(recordPath(sessionDir, contextId));
  } catch {
    return loadLegacy(sessionDir, contextId);
  }
  const lines = text.split("\n");
  // A whole record ends with a newline: the piece after the last one is empty or torn.
  const tail = lines.pop()!;
  const messages: ConversationMessage[] = [];
  for (let i = 0; i < lines.length; i++) {
    try {
      messages.push(JSON.parse(lines[i]));
    } catch {
      return null; // a bad line inside the record: not something a kill mid-append leaves
    }
  }
  return { messages, torn: tail === "" ? null : tail.slice(0, 80) };
}

function loadLegacy(sessionDir: string, contextId: string): LoadedConversation | null {
  try {
    const doc = JSON.parse(Deno.readTextFileSync(legacyPath(sessionDir, contextId)));
    return Array.isArray(doc?.messages)
      ? { messages: doc.messages as ConversationMessage[], torn: null }
      : null;
  } catch {
    return null;
  }
}
