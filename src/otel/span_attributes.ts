/**
 * The attributes of each span kind, read from the trace line it comes from (README
 * "OpenTelemetry" lists them): GenAI semantic conventions where they have a name, `mur.*` for the
 * rest. Pure functions of a line, so spans.ts keeps only the tree and the timing. `content` is the
 * manifest's `observability.otel_content`: command lines and tool arguments only when it is on.
 */
import type { Attributes } from "@opentelemetry/api";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_MCP_METHOD_NAME,
  ATTR_PROCESS_COMMAND_LINE,
  ATTR_PROCESS_EXECUTABLE_NAME,
  ATTR_PROCESS_EXIT_CODE,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from "@opentelemetry/semantic-conventions/incubating";
import type { TraceLine } from "../trace_writer.ts";

export type { TraceLine };

/** The line of one event type. */
type LineOf<T extends TraceLine["event_type"]> = Extract<TraceLine, { event_type: T }>;

export function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export function sessionAttributes(line: LineOf<"session_start">): Attributes {
  return {
    "mur.session.id": line.session_id,
    [ATTR_GEN_AI_AGENT_NAME]: line.capsule_name,
    [ATTR_GEN_AI_REQUEST_MODEL]: line.model,
    "mur.capsule.version": line.capsule_version,
    ...(line.resumed_from && { "mur.session.resumed_from": line.resumed_from }),
    // One string per staged artifact (an attribute holds no objects): `name@version runtime origin`.
    ...(line.runtime_artifacts.length > 0 && {
      "mur.session.runtime_artifacts": line.runtime_artifacts.map((a) =>
        `${a.name}@${a.version} ${a.runtime} ${a.origin}`
      ),
    }),
  };
}

export function taskAttributes(line: LineOf<"task_start">, capsule: string): Attributes {
  return {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
    [ATTR_GEN_AI_AGENT_NAME]: capsule,
    [ATTR_GEN_AI_CONVERSATION_ID]: line.context_id,
    "mur.task.id": line.task_id,
    "mur.task.lane": line.lane,
    "mur.task.origin": line.origin,
    "mur.task.source": line.source,
    "mur.task.trust": line.trust,
  };
}

export function inferenceAttributes(line: LineOf<"inference">): Attributes {
  return {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    [ATTR_GEN_AI_REQUEST_MODEL]: line.model,
    [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [line.stop_reason],
    "mur.turn": line.turn,
    "mur.decision": line.decision,
    ...(line.input_tokens !== undefined &&
      { [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: line.input_tokens }),
    ...(line.output_tokens !== undefined &&
      { [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: line.output_tokens }),
    ...(line.tool_name && { [ATTR_GEN_AI_TOOL_NAME]: line.tool_name }),
  };
}

export function toolCallAttributes(line: LineOf<"tool_call">, content: boolean): Attributes {
  return {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    [ATTR_GEN_AI_TOOL_NAME]: line.tool_name,
    [ATTR_GEN_AI_TOOL_CALL_ID]: line.tool_call_id,
    "mur.turn": line.turn,
    "mur.tool.status": line.status,
    "mur.tool.duration_ms": line.duration_ms,
    "mur.tool.input_bytes": line.input_bytes,
    "mur.tool.output_bytes": line.output_bytes,
    "mur.tool.truncated": line.truncated === true,
    // An MCP server's tool (docs/mcp.md): the MCP method and the server that answered.
    ...(line.server !== undefined && {
      [ATTR_MCP_METHOD_NAME]: "tools/call",
      [ATTR_GEN_AI_TOOL_TYPE]: "extension",
      "mur.mcp.server": line.server,
    }),
    ...(content && { [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: JSON.stringify(line.input) }),
  };
}

export function shellAttributes(line: LineOf<"shell">, content: boolean): Attributes {
  return {
    [ATTR_PROCESS_EXECUTABLE_NAME]: basename(line.binary),
    ...(line.exit_code !== null && { [ATTR_PROCESS_EXIT_CODE]: line.exit_code }),
    "mur.turn": line.turn,
    "mur.shell.duration_ms": line.duration_ms,
    "mur.shell.stdout_bytes": line.stdout_bytes,
    "mur.shell.stderr_bytes": line.stderr_bytes,
    ...(content && { [ATTR_PROCESS_COMMAND_LINE]: line.command }),
  };
}

export function detachedShellAttributes(
  line: LineOf<"shell_completed">,
  content: boolean,
): Attributes {
  return {
    [ATTR_PROCESS_EXECUTABLE_NAME]: basename(line.binary),
    ...(line.exit_code !== null && { [ATTR_PROCESS_EXIT_CODE]: line.exit_code }),
    "mur.shell.detached": true,
    "mur.shell.work_id": line.work_id,
    "mur.shell.duration_ms": line.duration_ms,
    "mur.shell.output_bytes": line.output_bytes,
    ...(content && { [ATTR_PROCESS_COMMAND_LINE]: line.command }),
  };
}

export function compactionAttributes(
  line: LineOf<"compaction" | "compaction_declined">,
): Attributes {
  return {
    "mur.turn": line.turn,
    ...(line.event_type === "compaction_declined"
      ? { "mur.compaction.declined": true, "mur.compaction.tokens": line.tokens }
      : {
        "mur.compaction.tokens_before": line.tokens_before,
        "mur.compaction.tokens_after": line.tokens_after,
      }),
  };
}

export function doneCheckAttributes(line: LineOf<"done_check">, content: boolean): Attributes {
  return {
    "mur.done_check.passed": line.passed,
    ...(line.exit_code !== null && { [ATTR_PROCESS_EXIT_CODE]: line.exit_code }),
    ...(content && { [ATTR_PROCESS_COMMAND_LINE]: line.command }),
  };
}

export function harnessAttributes(line: LineOf<"harness_start">): Attributes {
  return {
    "mur.harness.name": line.harness,
    "mur.harness.driver": line.driver,
    ...(line.harness_version && { "mur.harness.version": line.harness_version }),
    [ATTR_PROCESS_EXECUTABLE_NAME]: basename(line.binary),
  };
}

export function taskEndAttributes(line: LineOf<"task_end">): Attributes {
  return {
    "mur.task.exit_status": line.exit_status,
    "mur.task.reopen_count": line.reopen_count,
    "mur.task.turns": line.turns,
    "mur.task.input_tokens": line.input_tokens,
    "mur.task.output_tokens": line.output_tokens,
    "mur.task.tool_calls": line.tool_calls,
    "mur.task.shell_calls": line.shell_calls,
  };
}
