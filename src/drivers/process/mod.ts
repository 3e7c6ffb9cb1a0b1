/**
 * The process transport's entry: `createHarnessDriver(cfg, opts)` gives the loop a
 * `HarnessDriver` for `driver: claude-code` or `driver: codex`.
 */
import type { McpServerConfig } from "../../manifest/mcp_servers.ts";
import type { InferenceConfig } from "../../manifest/types.ts";
import { MurError } from "../../errors.ts";
import { runAttempt } from "./runner.ts";
import { DEFAULT_LIMITS, type HarnessLimits } from "./supervisor.ts";
import { claudeCode } from "./claude_code.ts";
import { codex } from "./codex.ts";
import { FileSessionStore, type HarnessSessionStore } from "./sessions.ts";
import type { VersionProbe } from "./launch_env.ts";
import type {
  AttemptRequest,
  HarnessDialect,
  HarnessDriver,
  HarnessPart,
  HarnessTelemetry,
} from "./types.ts";

export type * from "./types.ts";
export { FileSessionStore } from "./sessions.ts";
export type { HarnessLimits } from "./supervisor.ts";

export interface HarnessDriverOptions {
  /** The tools' working directory; the harness runs there. */
  workdir: string;
  /** Where a relative `inference.command` resolves (the manifest's folder). */
  baseDir: string;
  /** mur's own environment (default: Deno.env). */
  hostEnv?: Record<string, string>;
  /** Where threaded contexts' harness sessions are persisted; in memory when absent. */
  sessionStore?: HarnessSessionStore;
  sessionStorePath?: string;
  /** Limits (tests shorten them). */
  limits?: Partial<HarnessLimits>;
  now?: () => number;
  newSessionId?: () => string;
  /** The session's OpenTelemetry export, for a task (src/otel/export.ts). */
  telemetry?: (taskId: string) => HarnessTelemetry | undefined;
  /** The manifest's `mcp_servers:`, handed to the harness in its own MCP configuration. */
  mcpServers?: McpServerConfig[];
}

export function dialectFor(driver: string): HarnessDialect {
  if (driver === "claude-code") return claudeCode;
  if (driver === "codex") return codex;
  throw new MurError(
    "E-MAN-003",
    `inference.driver '${driver}' is not a process driver`,
    "use claude-code or codex with transport: process",
  );
}

export function createHarnessDriver(
  cfg: InferenceConfig,
  opts: HarnessDriverOptions,
): HarnessDriver {
  const dialect = dialectFor(cfg.driver);
  const desc = dialect.describe();
  const versions = new Map<string, VersionProbe>();
  let store: Promise<HarnessSessionStore> | null = null;
  const getStore = () =>
    store ??= opts.sessionStore
      ? Promise.resolve(opts.sessionStore)
      : FileSessionStore.open(opts.sessionStorePath ?? null);
  return {
    kind: "harness",
    name: cfg.driver,
    model: cfg.model ?? "",
    streamsText: desc.streamsText,
    async *attempt(req: AttemptRequest, signal: AbortSignal): AsyncIterable<HarnessPart> {
      yield* runAttempt(
        {
          dialect,
          driverName: cfg.driver,
          command: cfg.command,
          env: cfg.env,
          model: cfg.model,
          workdir: opts.workdir,
          baseDir: opts.baseDir,
          hostEnv: opts.hostEnv ?? Deno.env.toObject(),
          store: await getStore(),
          limits: { ...DEFAULT_LIMITS, ...opts.limits },
          now: opts.now ?? Date.now,
          newSessionId: opts.newSessionId ?? (() => crypto.randomUUID()),
          versions,
          telemetry: opts.telemetry,
          mcpServers: opts.mcpServers,
        },
        req,
        signal,
      );
    },
    async forgetSession(contextId: string): Promise<string | null> {
      return await (await getStore()).forgetContext(contextId);
    },
    async close(): Promise<void> {},
  };
}
