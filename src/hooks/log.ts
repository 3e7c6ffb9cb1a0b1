/**
 * `logs/hook-<name>.log`: one line per call of a hook (what it answered, or why it failed) and
 * the hook's stderr under it. Writing it never stops the session: a hook log that cannot be
 * written loses lines, nothing else.
 */
export class HookLog {
  constructor(readonly path: string) {}

  line(text: string): void {
    this.#append(`${new Date().toISOString()} ${text}\n`);
  }

  /** A multi-line block (the hook's stderr), each line indented under a label. */
  block(label: string, text: string): void {
    const lines = text.replace(/\n$/, "").split("\n").map((l) => `  ${label}: ${l}`);
    this.#append(lines.join("\n") + "\n");
  }

  #append(s: string): void {
    try {
      Deno.writeTextFileSync(this.path, s, { append: true, create: true });
    } catch {
      // best effort by design (see the file comment)
    }
  }
}
