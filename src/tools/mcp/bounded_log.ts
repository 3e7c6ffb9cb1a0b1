/**
 * A log file that stops growing at a limit: a stdio MCP server's stderr
 * (the session's `logs/mcp-<name>.log`, docs/mcp.md). Past the limit one line says so and the rest is counted,
 * not written, so a chatty or hostile server cannot fill the disk.
 */
export class BoundedLog {
  #chain: Promise<void> = Promise.resolve();
  #file: Deno.FsFile | null = null;
  written = 0;
  dropped = 0;
  #closed = false;

  constructor(readonly path: string, readonly limitBytes: number) {}

  write(chunk: Uint8Array): void {
    // A pipe may still hand over its last bytes after the session closed the log: dropped.
    if (this.#closed) return;
    const room = this.limitBytes - this.written;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const data = chunk.slice(0, room);
    const cut = data.length < chunk.length;
    this.written += data.length;
    this.dropped += chunk.length - data.length;
    this.#chain = this.#chain.then(async () => {
      this.#file ??= await Deno.open(this.path, { write: true, create: true, append: true });
      await writeAll(this.#file, data);
      if (cut) {
        await writeAll(
          this.#file,
          new TextEncoder().encode(
            `\n[mur: log cut at ${this.limitBytes} bytes; the rest dropped]\n`,
          ),
        );
      }
    }).catch(() => {});
  }

  /** Writes a line of mur's own (a restart, a death) unless the log is full. */
  note(text: string): void {
    this.write(new TextEncoder().encode(`[mur] ${text}\n`));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#chain;
    try {
      this.#file?.close();
    } catch {
      // Closed already.
    }
    this.#file = null;
  }
}

async function writeAll(f: Deno.FsFile, data: Uint8Array): Promise<void> {
  for (let at = 0; at < data.length;) at += await f.write(data.subarray(at));
}
