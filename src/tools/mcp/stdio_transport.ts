/**
 * The SDK `Transport` for a stdio MCP server, on `Deno.Command` rather than the SDK's own
 * StdioClientTransport, for three reasons (docs/mcp.md): the process is started by
 * spawnMcpServer (./spawn.ts, the one spawn point containment wraps), one message may be as
 * large as `maxMessageBytes` (the SDK's default drops the connection at 10 MiB), and the
 * server's stderr goes to the session's `logs/mcp-<name>.log`, bounded. A line that is not a JSON-RPC message
 * is reported through `onerror` and skipped; a message over the limit ends the connection (there
 * is no telling which request it answered), which fails the calls in flight.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type McpSpawnRequest, spawnMcpServer, stopMcpServer } from "./spawn.ts";
import type { BoundedLog } from "./bounded_log.ts";

export interface StdioTransportOptions {
  spawn: McpSpawnRequest;
  /** One JSON-RPC message's limit in bytes. */
  maxMessageBytes: number;
  /** Where stderr goes (bounded). */
  stderr: BoundedLog;
}

const NL = 0x0a;

export class McpStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #child: Deno.ChildProcess | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #closed = false;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  /** How the process ended, once it has (exit code or signal), for the source's message. */
  exit: string | null = null;

  constructor(private readonly o: StdioTransportOptions) {}

  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  start(): Promise<void> {
    const child = spawnMcpServer(this.o.spawn);
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    const out = this.#pumpStdout(child.stdout);
    const err = this.#pumpStderr(child.stderr);
    Promise.all([child.status, out, err]).then(([status]) => {
      this.exit = status.signal ? `killed by ${status.signal}` : `exited with code ${status.code}`;
      this.#end();
    });
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed || !this.#writer) throw new Error("the server's connection is closed");
    await this.#writer.write(new TextEncoder().encode(serializeMessage(message)));
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (!child || this.#closed) return this.#end();
    this.#writer?.close().catch(() => {});
    await stopMcpServer(child);
    this.#end();
  }

  #end(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }

  async #pumpStdout(stdout: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stdout) {
        if (this.#closed) continue;
        this.#take(chunk);
      }
    } catch {
      // The pipe broke: the process is gone, and its status ends the connection.
    }
  }

  /** Splits `chunk` at newlines into messages; a message over the limit ends the connection. */
  #take(chunk: Uint8Array): void {
    let start = 0;
    for (let i = chunk.indexOf(NL); i !== -1; i = chunk.indexOf(NL, start)) {
      this.#pending.push(chunk.subarray(start, i));
      this.#pendingBytes += i - start;
      const line = join(this.#pending, this.#pendingBytes);
      this.#pending = [];
      this.#pendingBytes = 0;
      start = i + 1;
      if (line.length > this.o.maxMessageBytes) return this.#oversize(line.length);
      this.#line(line);
    }
    if (start < chunk.length) {
      this.#pending.push(chunk.slice(start));
      this.#pendingBytes += chunk.length - start;
      if (this.#pendingBytes > this.o.maxMessageBytes) this.#oversize(this.#pendingBytes);
    }
  }

  #line(bytes: Uint8Array): void {
    const text = new TextDecoder().decode(bytes).replace(/\r$/, "");
    if (text.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch {
      const shown = text.length > 120 ? `${text.slice(0, 120)}…` : text;
      this.onerror?.(new Error(`the server wrote a line that is not a JSON-RPC message: ${shown}`));
      return;
    }
    this.onmessage?.(message);
  }

  #oversize(bytes: number): void {
    this.#pending = [];
    this.#pendingBytes = 0;
    this.onerror?.(
      new Error(
        `the server sent a message over ${this.o.maxMessageBytes} bytes (${bytes} so far); the connection was closed`,
      ),
    );
    this.close();
  }

  async #pumpStderr(stderr: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stderr) this.o.stderr.write(chunk);
    } catch {
      // As for stdout.
    }
  }
}

function join(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
