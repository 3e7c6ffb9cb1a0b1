/**
 * The Codex dialect (`driver: codex`, `codex exec --json`): README "Coding-agent CLIs as the
 * model", codex-cli 0.169.0 observed offline. Codex streams no deltas: each message arrives whole
 * as an `item.completed`, so text frames come as one whole `final:true` text at the end. The
 * capsule's tools reach it as an MCP server over HTTP (the bridge), its bearer token passed through
 * an env var, not argv.
 */
import { codexServerArgs } from "./codex_mcp.ts";
import { parseJsonLine } from "./json_line.ts";
import { z } from "zod";
import type {
  ExitInfo,
  HarnessDescription,
  HarnessDialect,
  HarnessEvent,
  HarnessFailureKind,
  HarnessParser,
  LaunchPlan,
  LaunchRequest,
} from "./types.ts";
import { toolOutputText } from "./tool_output.ts";
import { otlpEnv } from "./telemetry.ts";

export const CODEX_TESTED_VERSIONS = ["0.169.0"];
const TOKEN_ENV = "MUR_BRIDGE_TOKEN";

/** Codex's own tools, switched off so the capsule's tools are the only ones (0.169 names). */
const DISABLED_FEATURES = [
  "shell_tool",
  "unified_exec",
  "shell_snapshot",
  "code_mode_host",
  "goals",
  "image_generation",
  "view_image",
  "apps",
  "browser_use",
  "computer_use",
];

const DESCRIPTION: HarnessDescription = {
  harness: "codex",
  binary: "codex",
  versionArgs: ["--version"],
  testedVersions: CODEX_TESTED_VERSIONS,
  interrupt: "signal-int",
  defaultEnv: ["OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"],
  streamsText: false,
  reportsUsage: true,
  runtimeMintsSessionIds: false,
  announcesCallBy: "tool-call-started",
};

function tomlString(s: string): string {
  return JSON.stringify(s); // a TOML basic string is JSON-compatible for these values
}

function launch(req: LaunchRequest): LaunchPlan {
  const args = ["exec"];
  if (req.session.mode === "resume" && req.session.id) args.push("resume", req.session.id);
  args.push("--json", "--skip-git-repo-check");
  // `exec resume` takes no sandbox flag; the config key works for both forms.
  args.push("-c", `sandbox_mode="read-only"`);
  for (const f of DISABLED_FEATURES) args.push("--disable", f);
  const model = req.model?.trim();
  if (model) args.push("-m", model);
  const env: Record<string, string> = {};
  if (req.bridge) {
    const key = `mcp_servers.${req.bridge.serverName}`;
    args.push("-c", `${key}.url=${tomlString(req.bridge.url)}`);
    args.push("-c", `${key}.bearer_token_env_var=${tomlString(TOKEN_ENV)}`);
    // Without it a call fails: "MCP tool call requires approval, but approval policy is never".
    args.push("-c", `${key}.default_tools_approval_mode="approve"`);
    env[TOKEN_ENV] = req.bridge.token;
  }
  const servers = req.mcpServers ?? [];
  if (servers.length) {
    // The manifest's own servers (docs/mcp.md "On the process transport").
    const own = codexServerArgs(servers);
    args.push(...own.args);
    Object.assign(env, own.env);
  }
  if (req.telemetry) {
    // Codex's trace exporter is a config key; the endpoint's headers come from the standard
    // environment variable (telemetry.ts), so no secret is on argv. TRACEPARENT parents
    // its `codex.exec` span under the task's.
    const url = tomlString(req.telemetry.tracesUrl);
    args.push("-c", `otel.trace_exporter={otlp-http={endpoint=${url},protocol="json"}}`);
    if (req.telemetry.content) args.push("-c", "otel.log_user_prompt=true");
    Object.assign(env, otlpEnv(req.telemetry));
  }
  // No system-prompt flag: the [Capsule] block and the manifest prompt go before the task.
  const names = [...(req.bridge ? [req.bridge.serverName] : []), ...servers.map((s) => s.name)];
  const guidance = names.length
    ? `Use only the tools of the MCP server${names.length > 1 ? "s" : ""} ${
      names.map((n) => `"${n}"`).join(", ")
    }.`
    : "No tools are available; answer directly.";
  args.push("--", `${req.systemPrompt}\n\n${guidance}\n\n${req.prompt}`);
  // stdin stays closed: with a pipe left open codex waits for "additional input".
  return { args, env, files: [], keepStdinOpen: false };
}

const ThreadStarted = z.looseObject({ thread_id: z.string() });
const Item = z.looseObject({
  id: z.string().optional(),
  type: z.string(),
  text: z.string().optional(),
  message: z.string().optional(),
  server: z.string().optional(),
  tool: z.string().optional(),
  arguments: z.unknown().optional(),
  result: z.looseObject({ content: z.unknown().optional() }).nullable().optional(),
  error: z.looseObject({ message: z.string().optional() }).nullable().optional(),
  status: z.string().optional(),
  command: z.string().optional(),
});
const ItemLine = z.looseObject({ item: Item });
const TurnCompleted = z.looseObject({
  usage: z.looseObject({
    input_tokens: z.number().optional(),
    cached_input_tokens: z.number().optional(),
    cache_write_input_tokens: z.number().optional(),
    output_tokens: z.number().optional(),
    reasoning_output_tokens: z.number().optional(),
  }).optional(),
});
const Failed = z.looseObject({
  message: z.string().optional(),
  error: z.looseObject({ message: z.string().optional() }).optional(),
});

function kindFromMessage(message: string): HarnessFailureKind {
  if (/\b(401|403)\b|unauthori[sz]ed|invalid api key/i.test(message)) return "auth";
  if (/\b429\b|rate limit|quota|usage limit/i.test(message)) return "quota";
  return "harness-error";
}

class CodexParser implements HarnessParser {
  #server: string;
  #lastText = "";
  #retries = 0;
  #usage = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, thinking: 0 };

  constructor(serverName: string) {
    this.#server = serverName;
  }

  parse(line: string): HarnessEvent[] {
    return parseJsonLine(line, (type, json, l) => this.#dispatch(type, json, l));
  }

  #dispatch(type: string, json: unknown, line: string): HarnessEvent[] {
    switch (type) {
      case "thread.started":
        // Codex does not say how it is billed.
        return [{
          kind: "session-started",
          id: ThreadStarted.parse(json).thread_id,
          auth: "unknown",
        }];
      case "turn.started":
        return [];
      case "item.started": {
        const item = ItemLine.parse(json).item;
        if (item.type === "mcp_tool_call" && item.id) {
          return [{ kind: "tool-call-started", id: item.id, name: this.#name(item) }];
        }
        return [];
      }
      case "item.updated":
        return [];
      case "item.completed":
        return this.#item(ItemLine.parse(json).item);
      case "turn.completed": {
        const u = TurnCompleted.parse(json).usage;
        const out: HarnessEvent[] = [];
        if (u) {
          this.#usage.input += u.input_tokens ?? 0;
          this.#usage.output += u.output_tokens ?? 0;
          this.#usage.cacheRead += u.cached_input_tokens ?? 0;
          this.#usage.cacheCreation += u.cache_write_input_tokens ?? 0;
          this.#usage.thinking += u.reasoning_output_tokens ?? 0;
          out.push({
            kind: "usage",
            inputTokens: this.#usage.input,
            outputTokens: this.#usage.output,
            cacheReadTokens: this.#usage.cacheRead,
            cacheCreationTokens: this.#usage.cacheCreation,
            thinkingTokens: this.#usage.thinking,
          });
        }
        out.push({ kind: "turn-end", result: this.#lastText });
        return out;
      }
      case "turn.failed": {
        const f = Failed.parse(json);
        const message = f.error?.message ?? f.message ?? "the turn failed";
        return [{ kind: "turn-failed", failureKind: kindFromMessage(message), message }];
      }
      case "error": {
        const message = Failed.parse(json).message ?? "error";
        // "Reconnecting... 2/5 (…)": a transport retry, not the end of the turn.
        if (/^Reconnecting/i.test(message)) {
          return [{ kind: "retry", attempt: ++this.#retries, reason: message }];
        }
        return [{ kind: "turn-failed", failureKind: kindFromMessage(message), message }];
      }
      default:
        return [{ kind: "note", text: `unreadable stdout line: ${line.slice(0, 512)}` }];
    }
  }

  /** The bridge's tools by their own names; another server's as `mcp__<server>__<tool>`. */
  #name(item: z.infer<typeof Item>): string {
    return item.server === this.#server ? item.tool ?? "" : `mcp__${item.server}__${item.tool}`;
  }

  #item(item: z.infer<typeof Item>): HarnessEvent[] {
    switch (item.type) {
      case "agent_message":
        this.#lastText = item.text ?? "";
        return [{ kind: "text", text: this.#lastText }];
      case "reasoning":
        return item.text ? [{ kind: "thinking", text: item.text }] : [];
      case "mcp_tool_call": {
        const id = item.id ?? "";
        const name = this.#name(item);
        const failed = item.status === "failed" || !!item.error;
        const output = item.result
          ? toolOutputText(item.result.content)
          : item.error?.message ?? "";
        return [
          { kind: "tool-call", id, name, input: JSON.stringify(item.arguments ?? {}) },
          {
            kind: "tool-result",
            id,
            name,
            output,
            isError: failed || (item.result as { is_error?: boolean } | null)?.is_error === true,
            input: item.arguments ?? {},
          },
        ];
      }
      case "command_execution":
        return [{ kind: "note", text: `codex ran its own shell: ${item.command ?? ""}` }];
      case "error":
        return [{ kind: "note", text: `codex: ${item.message ?? ""}` }];
      default:
        return [];
    }
  }
}

function classifyExit(exit: ExitInfo): HarnessEvent & { kind: "turn-end" | "turn-failed" } {
  if (exit.interrupted) {
    return { kind: "turn-failed", failureKind: "canceled", message: "interrupted" };
  }
  const how = exit.signal
    ? `was killed by ${exit.signal}`
    : exit.code === 0
    ? "exited"
    : `exited with code ${exit.code}`;
  const tail = exit.stderrTail.trim();
  return {
    kind: "turn-failed",
    failureKind: kindFromMessage(tail),
    message: `the harness ${how} without a result${tail ? `: ${tail}` : ""}`,
  };
}

export const codex: HarnessDialect = {
  describe: () => DESCRIPTION,
  launch,
  createParser: ({ serverName }) => new CodexParser(serverName),
  classifyExit,
};
