/**
 * The manifest after validation, with every default applied (docs/manifest.md). Code past the
 * loader reads only this shape; the zod schema in schema.ts produces it.
 */
import type { McpServerConfig } from "./mcp_servers.ts";
import type { OpenApiService } from "./openapi_services.ts";
import type { ContainmentConfig } from "../containment/config.ts";

import type { ApprovalsConfig } from "./approvals.ts";

export type Transport = "http" | "process";
export type HttpDriverName = "scripted" | "anthropic" | "openai" | "openai-compatible";
export type ProcessDriverName = "claude-code" | "codex";
export type DriverName = HttpDriverName | ProcessDriverName;

export type TaskAcceptance = "none" | "single" | "queue";
export type AfterTask = "exit" | "sleep";
export type ConversationMode = "stateless" | "threaded";

export type HookBinding =
  | "on-stage"
  | "on-session-start"
  | "on-task-start"
  | "on-inference"
  | "on-tool-call"
  | "on-shell"
  | "on-compaction"
  | "on-task-end"
  | "on-session-end"
  | "on-approval";
export type CommitPolicy =
  | "none"
  | "write-manifests"
  | "seed-context"
  | "replace-context"
  | "reopen-task"
  | "deny";

export interface InferenceConfig {
  transport: Transport;
  driver: DriverName;
  /** Required for anthropic / openai / openai-compatible. */
  model?: string;
  endpoint?: string;
  apiKey?: string;
  /** Scripted driver only: absolute path of the script file. */
  script?: string;
  /** Process transport: the harness binary. */
  command?: string;
  /** Process transport: entries as written (`NAME` or `NAME=value`, already expanded). */
  env?: string[];
  maxTurns: number; // default 10
  maxTokens: number; // default 8192
  maxSessionTokens?: number;
  /** Resolved system prompt text (inline trimmed, or the file's contents verbatim). */
  systemPrompt?: string;
  systemPromptSource: "manifest" | "none";
  /** The skill `inference.system_prompt_artifact` names, when the prompt is its text. */
  systemPromptArtifact?: string;
  /** Seconds a model stream may stay silent before the turn fails (http drivers). Default 120. */
  idleTimeoutSecs: number;
}

export interface KeepWorking {
  limit: number;
  message: string;
  until?: string;
}

export interface DoneCheck {
  command: string;
  limit: number;
}

export interface LifecycleConfig {
  taskAcceptance: TaskAcceptance; // default single
  afterTask: AfterTask; // default exit
  queueDepth: number; // default 1
  conversation: ConversationMode; // default stateless
  maxTaskReopens: number; // default 1
  shellGraceSecs: number; // default 10
  inputTimeoutSecs?: number; // absent = forever
  /** How long a call-member call or a delegation may take, offering included (absent = 600). */
  delegationDeadlineSecs?: number;
  keepWorking?: KeepWorking;
  doneCheck?: DoneCheck;
  /** Messages each task's history keeps, the oldest dropped first (absent = 1000). */
  historyLimit?: number;
  /**
   * A message answered in one model turn with no tool call is answered with a bare A2A `Message`
   * rather than a Task (default false; docs/protocol.md "Direct replies").
   */
  directReply?: boolean;
}

export interface ContextConfig {
  maxTokens?: number;
  seedBudget: number; // 0.10
  seedOverflowMargin: number; // 0.10
  compactionThreshold: number; // 0.98
}

export interface Credential {
  name: string;
  scopes: string[];
}

export interface NetworkConfig {
  internalPort?: number;
  authentication?: { scheme: "bearer"; credentials: Credential[] };
  /** `network.push_notifications` (docs/push.md); absent: push is off. */
  pushNotifications?: PushConfig;
  /**
   * `network.retried_sends` (docs/door.md): `replay` answers a send whose messageId this
   * caller already sent with that task (src/door/retries.ts); `new_task` starts a task for every send.
   */
  retriedSends: RetriedSends;
}

export type RetriedSends = "replay" | "new_task";

export interface PushConfig {
  /** Deliveries to loopback, link-local and private addresses (default false: refused). */
  allowPrivate: boolean;
  /** The signing secret (`whsec_…`); absent: a new one per session. */
  secret?: string;
}

export interface CapabilitiesConfig {
  shell: { allow: string[] };
  filesystem: { readOnly: string[] };
  /** `spawn.allow` (docs/crews.md: `delegate-task`); absent when not declared. */
  spawn?: { allow: SpawnTarget[] };
}

/** A manifest `delegate-task` may start a child from: its name and absolute path. */
export interface SpawnTarget {
  name: string;
  path: string;
}

/** OpenTelemetry export (src/otel/): where spans go, and whether they carry content. */
export interface ObservabilityConfig {
  /** `observability.otel_endpoint`: the OTLP/HTTP base URL; absent: the environment decides. */
  otelEndpoint?: string;
  /** `observability.otel_content`: tool inputs and shell command lines on spans (default false). */
  otelContent: boolean;
}

/** `cluster:` (docs/edge.md): publish the session to Redis for `mur edge`. */
export interface ClusterConfig {
  /** `redis://[user[:password]@]host[:port][/db]`; the password may come from the environment. */
  redis: string;
  /** The door's address as edges reach it (default: the door's own `http://localhost:<port>`). */
  advertise?: string;
}

/** `outputs:` (docs/manifest.md): how published files leave the capsule. */
export interface OutputsConfig {
  /** A file up to this size travels inline as a `raw` part; larger ones as a `url` part. */
  inlineMaxBytes: number;
  /** The largest file `publish` takes. */
  maxBytes: number;
}

export interface CommandToolConfig {
  kind: "command";
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** argv; a relative program path is resolved against the manifest folder. */
  command: string[];
  /**
   * Set on a packaged tool (an `artifacts:` entry with `runtime: tool`, or a manifest an
   * `on-stage` hook wrote under `workdir/tools/`): its version and where it came from.
   */
  artifact?: ArtifactOrigin;
  /** Variables the program gets besides mur's own (`MURMUR_ARTIFACT_CONFIG`). */
  env?: Record<string, string>;
  /**
   * A tool artifact's `capabilities.env.allow`: of mur's environment, only these and the
   * baseline (src/artifact_env.ts). Absent: all a command tool gets.
   */
  hostEnv?: string[];
  /** A tool artifact's `capabilities.filesystem.read_only`: added to the capsule's for its calls. */
  readOnly?: string[];
  /** `data`: what it prints is JSON, published as a `data` artifact too (absent: text). */
  output?: "text" | "data";
}

/**
 * Where a packaged tool or skill came from: `operator` (declared in the capsule's `artifacts:`,
 * trusted) or `runtime` (found under `workdir/tools/` at staging or during the session,
 * untrusted: its results are fenced).
 */
export interface ArtifactOrigin {
  version: string;
  origin: "operator" | "runtime";
}

/**
 * A skill (docs/manifest.md "artifacts"): text the model reads by calling it as a tool with no input. An
 * operator skill's text is read at load; `promptBound` when `inference.system_prompt_artifact`
 * names it (then it is the system prompt and is not offered as a tool).
 */
export interface SkillConfig {
  name: string;
  version: string;
  description: string;
  text: string;
  /** Absolute path of the skill's folder. */
  source: string;
  promptBound: boolean;
}

export interface BuiltinToolConfig {
  kind: "builtin";
  name: "request-input" | "publish";
}

export type ToolConfig = CommandToolConfig | BuiltinToolConfig;

export interface HookConfig {
  name: string;
  /**
   * When it runs; `null` (no binding declared): at every binding, except `on-stage` for an async
   * hook (docs/hooks.md "Bindings").
   */
  binding: HookBinding | null;
  executionMode: "blocking" | "async";
  commitPolicy: CommitPolicy;
  /** argv; a relative program path is resolved against the manifest folder. */
  command: string[];
  /** Variables the command gets besides mur's own (`MURMUR_ARTIFACT_CONFIG` of a hook artifact). */
  env?: Record<string, string>;
  /**
   * A hook artifact's host variables: the baseline and these (`capabilities.env.allow`; a hook
   * artifact is default-deny, so `[]` without a grant). Absent (a `hooks:` entry): all a hook gets.
   */
  hostEnv?: string[];
  /** Set on a hook artifact (an `artifacts:` entry with `runtime: hook`): its version. */
  artifact?: ArtifactOrigin;
  /**
   * `output: data`: its `artifact` answer is published as a `data` artifact of the task instead
   * of an `artifact` frame (docs/hooks.md "Data artifacts").
   */
  output?: "data";
}

/** A hook as one binding fires it: an unbound hook takes the binding of the event it is called for. */
export type BoundHook = HookConfig & { binding: HookBinding };

/** Whether `h` runs at `binding` (an unbound hook: every binding but on-stage when async). */
export function firesAt(h: HookConfig, binding: HookBinding): boolean {
  if (h.binding !== null) return h.binding === binding;
  return binding !== "on-stage" || h.executionMode === "blocking";
}

export interface Manifest {
  name: string;
  version: string;
  /** Absolute path of the manifest file, and its folder. */
  path: string;
  dir: string;
  inference: InferenceConfig;
  lifecycle: LifecycleConfig;
  context: ContextConfig;
  network: NetworkConfig;
  capabilities: CapabilitiesConfig;
  /** Containment (src/containment/config.ts); absent in a Manifest built by hand: the defaults. */
  containment?: ContainmentConfig;
  observability: ObservabilityConfig;
  cluster?: ClusterConfig;
  /** Absent: the defaults (src/manifest/schema.ts DEFAULTS). */
  outputs?: OutputsConfig;
  /** `exports:` (docs/door.md "Peer tasks and trust"); absent: the capsule takes no peer tasks. */
  exports?: { peerTasks: { accept: boolean } };
  /** `tools:` entries, then the tool artifacts in `artifacts:` order. */
  tools: ToolConfig[];
  /** `hooks:` entries, then the hook artifacts in `artifacts:` order. */
  hooks: HookConfig[];
  /** The skill artifacts in `artifacts:` order (absent: none). */
  skills?: SkillConfig[];
  /** `approvals:` (docs/approvals.md); absent: no call waits for approval. */
  approvals?: ApprovalsConfig;
  /** `mcp_servers:` in manifest order (absent: none); docs/mcp.md. */
  mcpServers?: McpServerConfig[];
  /** `openapi_services:` in manifest order (absent: none); docs/mcp.md "OpenAPI services". */
  openApiServices?: OpenApiService[];
}

/** What loading produced besides the manifest: warnings to print (`warning[W-…]: …`). */
export interface LoadedManifest {
  manifest: Manifest;
  warnings: string[];
}
