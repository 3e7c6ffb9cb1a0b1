/**
 * One MCP server as a tool source (docs/mcp.md): connected (stdio through ./stdio_transport.ts,
 * or streamable HTTP), initialized and listed within `startup_timeout_secs`; the capsule's roots
 * offered; `notifications/tools/list_changed` answered by listing again (the next turn offers the
 * new list); calls made with a progress token, a timeout that cancels (`notifications/cancelled`,
 * the SDK's) and the task's cancel signal. A server that closes mid-session fails its calls in
 * flight (the SDK rejects them) and is restarted after each of RESTART_DELAYS_MS; past the last
 * it is marked down and offers nothing. Every problem goes to `onError` (a `W-` line at launch,
 * a `source_error` trace line, the tasks' `sourceErrors`).
 */
import type { ContainmentPolicy } from "../../containment/policy.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { abortableSleep } from "../../abortable_sleep.ts";
import { errorMessage } from "../../errors.ts";
import type { McpServerConfig } from "../../manifest/mcp_servers.ts";
import { basename } from "../../paths.ts";
import { MUR_VERSION } from "../../version.ts";
import { BoundedLog } from "./bounded_log.ts";
import { mcpServerEnv } from "./env.ts";
import { type ListedTool, listTools } from "./listing.ts";
import { McpStdioTransport } from "./stdio_transport.ts";

import type { SourceError, SourcePhase } from "../source_errors.ts";
import type { NetworkAllowEntry } from "../../containment/config.ts";
import { urlAllowed } from "../../containment/url_allowed.ts";

export type { SourceError, SourcePhase };

export interface McpSourceDeps {
  /** Where `mcp-<name>.log` (stderr and mur's notes) goes. */
  logsDir: string;
  /** Absolute folders offered as the client's roots (the capsule's filesystem scope). */
  roots: string[];
  /** mur's environment, of which a stdio server gets the allowed part. */
  hostEnv: Record<string, string>;
  onError(e: SourceError, phase: SourcePhase): void;
  /** Waits before each restart; past the last the server is marked down. */
  restartDelaysMs?: number[];
  /** One stdio message's limit. */
  maxMessageBytes?: number;
  /** The stderr log's limit. */
  logLimitBytes?: number;
  /** What a stdio server runs under (src/containment/spawn.ts); absent: unconfined. */
  containment?: ContainmentPolicy;
  /** `capabilities.network.allow`: an HTTP server's url must be in it when declared. */
  networkAllow?: NetworkAllowEntry[] | null;
}

export const RESTART_DELAYS_MS = [500, 2_000, 8_000];
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
export const LOG_LIMIT_BYTES = 1024 * 1024;

export type SourceState = "starting" | "up" | "restarting" | "down" | "closed";

export class McpSource {
  state: SourceState = "starting";
  #client: Client | null = null;
  #transport: Transport | null = null;
  #tools: ListedTool[] = [];
  #restarts = 0;
  readonly #stop = new AbortController();
  readonly log: BoundedLog;

  constructor(readonly cfg: McpServerConfig, private readonly d: McpSourceDeps) {
    this.log = new BoundedLog(
      `${d.logsDir}/mcp-${cfg.name}.log`,
      d.logLimitBytes ?? LOG_LIMIT_BYTES,
    );
  }

  get name(): string {
    return this.cfg.name;
  }

  /** The tools offered now: none unless the server is up or being restarted. */
  tools(): ListedTool[] {
    return this.state === "up" || this.state === "restarting" ? this.#tools : [];
  }

  /** The connected client, or why there is none. */
  client(): Client | string {
    if (this.state === "up" && this.#client) return this.#client;
    return `MCP server '${this.name}' is ${
      this.state === "restarting" ? "restarting after it went away" : this.state
    }`;
  }

  /** Connects and lists; a failure is told (phase `launch`) and leaves the source down. */
  async start(): Promise<void> {
    if (this.cfg.kind === "http" && !urlAllowed(this.cfg.url, this.d.networkAllow ?? null)) {
      this.state = "down";
      const host = new URL(this.cfg.url).host;
      this.#tell(`${host} is not in capabilities.network.allow; not connected`, "launch");
      return;
    }
    try {
      await this.#connect();
      this.state = "up";
    } catch (e) {
      this.state = "down";
      this.#tell(errorMessage(e), "launch");
    }
  }

  async close(): Promise<void> {
    this.state = "closed";
    this.#stop.abort();
    await this.#client?.close().catch(() => {});
    await this.log.close();
  }

  #tell(message: string, phase: SourcePhase): void {
    this.log.note(message);
    this.d.onError({ kind: "mcp", source: this.name, message }, phase);
  }

  // Why long: one connection attempt, step by step with the timer that bounds it all.
  async #connect(): Promise<void> {
    const client = new Client(
      { name: "mur", version: MUR_VERSION },
      { capabilities: { roots: { listChanged: true } } },
    );
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: this.d.roots.map((p) => ({ uri: new URL(`file://${p}`).href, name: basename(p) })),
    }));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#relist(client));
    // Lines that are not JSON-RPC and the like: the server's log says so; the connection goes on.
    client.onerror = (e: Error) => this.log.note(`protocol error: ${e.message}`);
    // Set before connecting, so a server that goes away right after it listed is not missed.
    let gone = false;
    client.onclose = () => {
      gone = true;
      void this.#closed(client);
    };
    const transport = this.#newTransport();
    const limit = this.cfg.startupTimeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`did not initialize and list its tools within ${limit / 1000} s`)),
        limit,
      );
    });
    try {
      await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: limit });
          const listing = await listTools(client, this.cfg, limit);
          this.#tools = listing.tools;
          for (const note of listing.notes) this.#tell(note, this.#phase());
        })(),
        deadline,
      ]);
    } catch (e) {
      await client.close().catch(() => {});
      throw new Error(this.#why(e, transport));
    } finally {
      clearTimeout(timer);
    }
    if (this.#stop.signal.aborted) {
      // The session closed the source while this connection was being made (a restart).
      await client.close().catch(() => {});
      throw new Error("the source was closed");
    }
    this.#client = client;
    this.#transport = transport;
    // It went while it was being listed: handled as any later death.
    if (gone) void this.#closed(client);
  }

  #phase(): SourcePhase {
    return this.state === "starting" ? "launch" : "session";
  }

  #newTransport(): Transport {
    const c = this.cfg;
    if (c.kind === "http") {
      return new StreamableHTTPClientTransport(new URL(c.url), {
        requestInit: { headers: c.headers },
      });
    }
    return new McpStdioTransport({
      spawn: {
        argv: c.argv,
        cwd: c.cwd,
        env: mcpServerEnv(this.d.hostEnv, c.envAllow, c.env),
        containment: this.d.containment,
      },
      maxMessageBytes: this.d.maxMessageBytes ?? MAX_MESSAGE_BYTES,
      stderr: this.log,
    });
  }

  /** A connection failure in words: the process's exit when it went, never a header value. */
  #why(e: unknown, transport: Transport): string {
    const exit = transport instanceof McpStdioTransport ? transport.exit : null;
    const m = errorMessage(e);
    if (e instanceof Deno.errors.NotFound && this.cfg.kind === "stdio") {
      return `cannot start '${this.cfg.argv[0]}': not found`;
    }
    if (exit) {
      return `the server ${exit} before it was ready (${m}); see the session's logs/mcp-${this.name}.log`;
    }
    return m;
  }

  async #relist(client: Client): Promise<void> {
    if (client !== this.#client) return;
    try {
      const listing = await listTools(client, this.cfg, this.cfg.startupTimeoutMs);
      this.#tools = listing.tools;
      this.log.note(`tools/list_changed: ${listing.tools.length} tool(s) offered now`);
      for (const note of listing.notes) this.#tell(note, "session");
    } catch (e) {
      this.log.note(`listing again after tools/list_changed failed: ${errorMessage(e)}`);
    }
  }

  /**
   * An HTTP server stopped answering a call (no answer, or an HTTP error such as a session it no
   * longer knows): connected again after a wait, as a stdio server is restarted.
   */
  lost(client: Client, why: string): void {
    if (this.cfg.kind !== "http" || client !== this.#client || this.state !== "up") return;
    this.#client = null;
    void client.close().catch(() => {});
    void this.#restart(` (${why})`);
  }

  /** The connection ended without mur closing it: restart after a wait, or mark down. */
  async #closed(client: Client): Promise<void> {
    if (client !== this.#client || this.state === "closed") return;
    const t = this.#transport;
    const exit = t instanceof McpStdioTransport && t.exit ? ` (${t.exit})` : "";
    this.#client = null;
    await this.#restart(exit);
  }

  async #restart(exit: string): Promise<void> {
    const delays = this.d.restartDelaysMs ?? RESTART_DELAYS_MS;
    while (this.#restarts < delays.length) {
      const wait = delays[this.#restarts++];
      this.state = "restarting";
      this.#tell(
        `the server's connection closed${exit}; restart ${this.#restarts} of ${delays.length} in ${wait} ms`,
        "session",
      );
      await abortableSleep(wait, this.#stop.signal);
      if (this.#stop.signal.aborted) return;
      try {
        await this.#connect();
        this.state = "up";
        this.log.note("restarted");
        return;
      } catch (e) {
        this.log.note(`restart failed: ${errorMessage(e)}`);
      }
    }
    this.state = "down";
    this.#tell(
      `the server is marked down after ${delays.length} restarts; its tools are withdrawn`,
      "session",
    );
  }
}
