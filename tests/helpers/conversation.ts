/**
 * A context's conversation record as a test reads it: `conversation/<ctx>.jsonl` in a session
 * folder, one message per line (src/session/conversation_record.ts, docs/running.md "Files").
 * Messages come back untyped, as JSON.parse gives them: each test reads the fields it checks.
 */
// deno-lint-ignore-file no-explicit-any

export function parseRecord(text: string): any[] {
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

export async function readConversation(dir: string, ctx: unknown): Promise<any[]> {
  return parseRecord(await Deno.readTextFile(`${dir}/conversation/${String(ctx)}.jsonl`));
}

export function readConversationSync(dir: string, ctx: unknown): any[] {
  return parseRecord(Deno.readTextFileSync(`${dir}/conversation/${String(ctx)}.jsonl`));
}
