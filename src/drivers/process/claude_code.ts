/**
 * The Claude Code dialect (`driver: claude-code`): command line, stdin protocol, stream-json
 * line → event (the lines themselves: claude_lines.ts), exit classification (README "Coding-agent
 * CLIs as the model"; Claude Code 2.1.328 observed offline).
 */
import { allowedRules, deniedRules } from "./mcp_servers.ts";
import { parseJsonLine } from "./json_line.ts";
import type { z } from "zod";
import type {
  ExitInfo,
  HarnessDescription,
  HarnessDialect,
  HarnessEvent,
  HarnessParser,
  LaunchPlan,
  LaunchRequest,
} from "./types.ts";
import { toolOutputText } from "./tool_output.ts";
import { otlpEnv } from "./telemetry.ts";
import type { HarnessTelemetry } from "./types.ts";
import {
  classifyResult,
  MessageLine,
  quotaWindows,
  RateLimitLine,
  ResultLine,
  StreamEvent,
  SuggestionLine,
  SystemLine,
} from "./claude_lines.ts";

export const CLAUDE_TESTED_VERSIONS = ["2.1.328"];

const DESCRIPTION: HarnessDescription = {
  harness: "claude-code",
  binary: "claude",
  versionArgs: ["--version"],
  testedVersions: CLAUDE_TESTED_VERSIONS,
  interrupt: "stdin-message",
  defaultEnv: [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_OAUTH_TOKEN",
  ],
  // Suggestions need the env var and the flag; an operator can still turn them off in
  // inference.env, which is applied over these.
  envDefaults: { CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION: "true" },
  streamsText: true,
  reportsUsage: true,
  runtimeMintsSessionIds: true,
  announcesCallBy: "tool-call",
};

/**
 * Claude Code's own telemetry, traces only (its traces are behind the enhanced-telemetry beta
 * switch in the versions tested); in `--print` mode it reads `TRACEPARENT`, so its
 * `claude_code.interaction` span is a child of the task's. Prompts and tool details only with
 * `otel_content`.
 */
function telemetryEnv(t: HarnessTelemetry): Record<string, string> {
  return {
    ...otlpEnv(t),
    CLAUDE_CODE_ENABLE_TELEMETRY: "1",
    CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1",
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_METRICS_EXPORTER: "none",
    OTEL_LOGS_EXPORTER: "none",
    ...(t.content && { OTEL_LOG_USER_PROMPTS: "1", OTEL_LOG_TOOL_DETAILS: "1" }),
  };
}

function launch(req: LaunchRequest): LaunchPlan {
  const args = [
    "--print",
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
    "--include-partial-messages",
    // Keep the operator's own CLAUDE.md, settings and hooks out of the capsule's run.
    "--setting-sources",
    "",
  ];
  const model = req.model?.trim();
  if (model) args.push("--model", model); // `--model ""` is rejected by the CLI
  if (req.session.id) {
    args.push(req.session.mode === "resume" ? "--resume" : "--session-id", req.session.id);
  }
  // No built-in tools: the capsule's tools are the only ones the harness may use.
  args.push("--tools", "");
  const files: LaunchPlan["files"] = [];
  const servers = req.mcpServers ?? [];
  if (req.bridge || servers.length) {
    const mcpServers: Record<string, unknown> = {};
    // The manifest's own servers (docs/mcp.md), then the bridge, whose name mur keeps.
    for (const s of servers) mcpServers[s.name] = s.entry;
    const allowed = allowedRules(servers);
    if (req.bridge) {
      const prefix = `mcp__${req.bridge.serverName}__`;
      mcpServers[req.bridge.serverName] = {
        type: "http",
        url: req.bridge.url,
        headers: { Authorization: `Bearer ${req.bridge.token}` },
      };
      allowed.push(...req.bridge.toolNames.map((t) => prefix + t));
    }
    // In a 0600 file, not on argv: any local process can read another's argv.
    files.push({ name: "mcp-config.json", contents: JSON.stringify({ mcpServers }) });
    args.push("--mcp-config", "{files_dir}/mcp-config.json");
    // Root-safe permissions: bypassPermissions is refused as root, so allow exactly the
    // bridged tools and the servers' allowed ones, and deny everything else without asking.
    args.push("--allowedTools", allowed.join(","));
    const denied = deniedRules(servers);
    if (denied.length) args.push("--disallowedTools", denied.join(","));
    args.push("--permission-mode", "dontAsk");
  }
  args.push("--strict-mcp-config");
  args.push("--system-prompt", req.systemPrompt);
  args.push("--prompt-suggestions");
  const userLine = {
    type: "user",
    message: { role: "user", content: [{ type: "text", text: req.prompt }] },
  };
  const interrupt = {
    type: "control_request",
    request_id: `mur-interrupt-${req.session.id ?? "run"}`,
    request: { subtype: "interrupt" },
  };
  return {
    args,
    env: req.telemetry ? telemetryEnv(req.telemetry) : {},
    files,
    stdin: JSON.stringify(userLine) + "\n",
    // Kept open so the interrupt can still be written; closed after the result.
    keepStdinOpen: true,
    interruptStdin: JSON.stringify(interrupt) + "\n",
  };
}

const utf8 = new TextEncoder();

class ClaudeParser implements HarnessParser {
  readonly #prefix: string;
  /** Tool-use blocks of the current message, by content-block index. */
  #open = new Map<number, { id: string; bytes: number }>();
  #usage = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, thinking: 0 };

  constructor(serverName: string) {
    this.#prefix = `mcp__${serverName}__`;
  }

  /** The manifest's MCP servers the harness could not connect (docs/mcp.md). */
  #serversDown(servers: { name: string; status: string }[]): HarnessEvent[] {
    const bridge = this.#prefix.slice("mcp__".length, -2);
    return servers
      .filter((s) => s.name !== bridge && s.status !== "connected" && s.status !== "pending")
      .map((s) => ({
        kind: "source-down" as const,
        source: s.name,
        message: `the harness reports the server ${s.status}`,
      }));
  }

  #bare(name: string): string {
    return name.startsWith(this.#prefix) ? name.slice(this.#prefix.length) : name;
  }

  parse(line: string): HarnessEvent[] {
    return parseJsonLine(line, (type, json, l) => this.#dispatch(type, json, l));
  }

  #dispatch(type: string, json: unknown, line: string): HarnessEvent[] {
    switch (type) {
      case "system":
        return this.#system(SystemLine.parse(json));
      case "control_response":
        return [];
      case "stream_event":
        return this.#stream(StreamEvent.parse(json).event);
      case "assistant":
        return this.#assistant(MessageLine.parse(json));
      case "user":
        return this.#user(MessageLine.parse(json));
      case "result":
        return this.#result(ResultLine.parse(json));
      case "rate_limit_event": {
        const windows = quotaWindows(RateLimitLine.parse(json).rate_limit_info);
        return windows.length ? [{ kind: "quota", windows }] : [];
      }
      case "prompt_suggestion": {
        const text = SuggestionLine.parse(json).suggestion ?? "";
        return text.trim() ? [{ kind: "suggested-prompt", text }] : [];
      }
      default:
        return [{ kind: "note", text: `unreadable stdout line: ${line.slice(0, 512)}` }];
    }
  }

  #system(s: z.infer<typeof SystemLine>): HarnessEvent[] {
    if (s.subtype === "init" && s.session_id) {
      return [{
        kind: "session-started",
        id: s.session_id,
        auth: s.apiKeySource === "none" ? "subscription" : "api-key",
        ...(s.model ? { model: s.model } : {}),
      }, ...this.#serversDown(s.mcp_servers ?? [])];
    }
    if (s.subtype === "api_retry") {
      const err = typeof s.error === "string" ? s.error : undefined;
      const status = typeof s.error_status === "number" || typeof s.error_status === "string"
        ? String(s.error_status)
        : undefined;
      const reason = err && status ? `${err} (${status})` : err ?? status ?? "unknown";
      return [{ kind: "retry", attempt: s.attempt ?? 0, reason }];
    }
    return [];
  }

  #stream(ev: z.infer<typeof StreamEvent>["event"]): HarnessEvent[] {
    switch (ev.type) {
      case "message_start":
        this.#open.clear();
        return [];
      case "content_block_start": {
        const b = ev.content_block;
        if (b?.type === "tool_use" && b.id && ev.index !== undefined) {
          this.#open.set(ev.index, { id: b.id, bytes: 0 });
          return [{ kind: "tool-call-started", id: b.id, name: this.#bare(b.name ?? "") }];
        }
        return [];
      }
      case "content_block_delta": {
        const d = ev.delta;
        if (!d) return [];
        if (d.type === "text_delta" && d.text) return [{ kind: "text-delta", text: d.text }];
        if (d.type === "thinking_delta" && d.thinking) {
          return [{ kind: "thinking-delta", text: d.thinking }];
        }
        if (d.type === "input_json_delta" && d.partial_json && ev.index !== undefined) {
          const call = this.#open.get(ev.index);
          if (!call) return [];
          call.bytes += utf8.encode(d.partial_json).length;
          return [{ kind: "tool-call-progress", id: call.id, inputBytes: call.bytes }];
        }
        return [];
      }
      default:
        return [];
    }
  }

  #assistant(m: z.infer<typeof MessageLine>): HarnessEvent[] {
    // The CLI's own error report ("API Error: …") is no model action; `result` reports it.
    if (m.message.model === "<synthetic>") return [];
    const content = m.message.content;
    if (!Array.isArray(content)) return [];
    const thinking: string[] = [];
    const text: string[] = [];
    const calls: HarnessEvent[] = [];
    for (const b of content) {
      if (b.type === "thinking" && typeof b.thinking === "string" && b.thinking) {
        thinking.push(b.thinking);
      } else if (b.type === "text" && typeof b.text === "string") text.push(b.text);
      else if (b.type === "tool_use" && typeof b.id === "string") {
        calls.push({
          kind: "tool-call",
          id: b.id,
          name: this.#bare(String(b.name ?? "")),
          input: JSON.stringify(b.input ?? {}),
        });
      }
    }
    const out: HarnessEvent[] = [];
    if (thinking.length) out.push({ kind: "thinking", text: thinking.join("\n") });
    if (text.length) out.push({ kind: "text", text: text.join("") });
    out.push(...calls);
    return out;
  }

  #user(m: z.infer<typeof MessageLine>): HarnessEvent[] {
    const content = m.message.content;
    if (!Array.isArray(content)) return [];
    const out: HarnessEvent[] = [];
    for (const b of content) {
      if (b.type !== "tool_result") continue; // "[Request interrupted by user]" and the like
      out.push({
        kind: "tool-result",
        id: String(b.tool_use_id ?? ""),
        output: toolOutputText(b.content),
        isError: b.is_error === true,
      });
    }
    return out;
  }

  #result(r: z.infer<typeof ResultLine>): HarnessEvent[] {
    const out: HarnessEvent[] = [];
    const u = r.usage;
    if (u) {
      this.#usage.input += u.input_tokens ?? 0;
      this.#usage.output += u.output_tokens ?? 0;
      this.#usage.cacheRead += u.cache_read_input_tokens ?? 0;
      this.#usage.cacheCreation += u.cache_creation_input_tokens ?? 0;
      this.#usage.thinking += u.output_tokens_details?.thinking_tokens ?? 0;
      out.push({
        kind: "usage",
        inputTokens: this.#usage.input,
        outputTokens: this.#usage.output,
        cacheReadTokens: this.#usage.cacheRead,
        cacheCreationTokens: this.#usage.cacheCreation,
        thinkingTokens: this.#usage.thinking,
      });
    }
    out.push(classifyResult(r));
    return out;
  }
}

function classifyExit(exit: ExitInfo): HarnessEvent & { kind: "turn-end" | "turn-failed" } {
  // SIGINT makes claude exit 0, so the interrupted flag is read before the code.
  if (exit.interrupted) {
    return { kind: "turn-failed", failureKind: "canceled", message: "interrupted" };
  }
  if (exit.code === 0) {
    return {
      kind: "turn-failed",
      failureKind: "harness-error",
      message: "the harness exited without a result",
    };
  }
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const tail = exit.stderrTail.trim();
  return {
    kind: "turn-failed",
    failureKind: "harness-error",
    message: `the harness ${how} without a result${tail ? `: ${tail}` : ""}`,
  };
}

export const claudeCode: HarnessDialect = {
  describe: () => DESCRIPTION,
  launch,
  createParser: ({ serverName }) => new ClaudeParser(serverName),
  classifyExit,
};
