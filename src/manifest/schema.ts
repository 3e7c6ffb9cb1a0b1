/**
 * What a valid `murmur.yaml` is (docs/manifest.md): the zod schema of the document as written
 * (snake_case, every key optional where the contract gives a default); the checks that span
 * several keys are in ./checks.ts. Every message names the key path, because users read it as
 * `error[E-MAN-003]: <message>` with nothing else to go on.
 *
 * Objects are strict so that zod reports unknown keys; the loader turns those into
 * `W-SEC-019` warnings and drops them before the real validation (docs/manifest.md: an unknown key
 * is a warning, not an error — except a misspelt section, E-MAN-004, misspelt_sections.ts).
 */
import { spawnName } from "./spawn.ts";
import { SCOPES as DOOR_SCOPES } from "../a2a/methods.ts";
import { z } from "zod";
import { MurError } from "../errors.ts";
import { parseRedisUrl } from "./redis_url.ts";
import {
  capNetworkSchema,
  containmentSchema,
  filesystemContainmentKeys,
  resourcesSchema,
} from "./containment_keys.ts";
import { approvalsSchema } from "./approvals.ts";
import type { CommitPolicy, HookBinding, ProcessDriverName } from "./types.ts";
import { mcpServersSchema } from "./mcp_servers.ts";
import { openApiServicesSchema } from "./openapi_services.ts";

export const TRANSPORTS = ["http", "process"] as const;
export const HTTP_DRIVERS = ["scripted", "anthropic", "openai", "openai-compatible"] as const;
export const PROCESS_DRIVERS = ["claude-code", "codex"] as const;
/** Drivers that call a model provider and so need `inference.model`. */
export const PROVIDER_DRIVERS = ["anthropic", "openai", "openai-compatible"] as const;

export const HOOK_BINDINGS = [
  "on-stage",
  "on-session-start",
  "on-task-start",
  "on-inference",
  "on-tool-call",
  "on-shell",
  "on-compaction",
  "on-task-end",
  "on-session-end",
  "on-approval",
] as const satisfies readonly HookBinding[];

export const COMMIT_POLICIES = [
  "none",
  "write-manifests",
  "seed-context",
  "replace-context",
  "reopen-task",
  "deny",
] as const satisfies readonly CommitPolicy[];

/**
 * The one committing policy each binding honors besides `none` (docs/hooks.md "Answers and
 * policies").
 */
export const BINDING_POLICY: Record<HookBinding, CommitPolicy | undefined> = {
  "on-stage": "write-manifests",
  "on-session-start": undefined,
  "on-task-start": "seed-context",
  "on-inference": undefined,
  "on-tool-call": "deny",
  "on-shell": "deny",
  "on-compaction": "replace-context",
  "on-task-end": "reopen-task",
  "on-session-end": undefined,
  "on-approval": undefined,
};

/** Door scopes are method names (docs/door.md). */
export const SCOPES = DOOR_SCOPES;

/** The credential name the runtime always mints itself, holding every scope. */
export const RESERVED_CREDENTIAL = "operator";

export const BUILTIN_TOOLS = ["request-input", "publish"] as const;

/**
 * Tool names the runtime keeps for its own tools (the session's request-input and the crew
 * tools, docs/crews.md): an artifact claiming one is E-CAP-013.
 */
export const RESERVED_TOOL_NAMES = [
  "request-input",
  "call-member",
  "end-without-answer",
  "delegate-task",
] as const;

/** The artifact runtimes mur runs (docs/manifest.md "artifacts"). */
export const ARTIFACT_RUNTIMES = ["tool", "hook", "skill"] as const;

/**
 * Runtimes of the reference runtime that mur does not have, and what to do instead: mur runs no
 * WASM components and stages no native binaries, and its model drivers are built in.
 */
export const UNSUPPORTED_RUNTIMES: Record<string, string> = {
  driver: "mur's model drivers are built in: name one with inference.driver",
  wasm: "mur runs no WASM components: package the tool as a command (runtime: tool)",
  native: "mur stages no native binaries: package the program as a command tool (runtime: tool)",
};

/** `MURMUR_ARTIFACT_CONFIG` holds an artifact's `config` as compact JSON of at most this. */
export const ARTIFACT_CONFIG_MAX_BYTES = 65_536;

/**
 * Process transport: the harness binary and the environment it gets, by driver (README
 * "Coding-agent CLIs as the model").
 */
export const PROCESS_DEFAULTS: Record<ProcessDriverName, { command: string; env: string[] }> = {
  "claude-code": {
    command: "claude",
    env: [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "ANTHROPIC_BASE_URL",
      "CLAUDE_CODE_OAUTH_TOKEN",
    ],
  },
  codex: { command: "codex", env: ["OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"] },
};

/** Defaults (docs/manifest.md) for every key that has one. */
export const DEFAULTS = {
  transport: "http",
  driver: "scripted",
  maxTurns: 10,
  maxTokens: 8192,
  idleTimeoutSecs: 120,
  taskAcceptance: "single",
  afterTask: "exit",
  queueDepth: 1,
  conversation: "stateless",
  maxTaskReopens: 1,
  shellGraceSecs: 10,
  keepWorkingLimit: 1,
  doneCheckLimit: 1,
  seedBudget: 0.10,
  seedOverflowMargin: 0.10,
  compactionThreshold: 0.98,
  executionMode: "blocking",
  commitPolicy: "none",
  authScheme: "bearer",
  retriedSends: "replay",
  historyLimit: 1000,
  inlineMaxBytes: 65_536,
  maxFileBytes: 67_108_864,
} as const;

/** A JSON-ish rendering of a bad value for messages: strings quoted with '…'. */
export function show(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  if (value === undefined) return "nothing";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `tools[1].command` from zod's `["tools", 1, "command"]`. */
export function keyPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

// ---- building blocks: each carries its own message so every issue reads as `<path>: <rule>`.

export const str = () => z.string({ error: "must be a string" });
export const nonEmpty = () => str().min(1, { error: "must not be empty" });

/** Numbers may arrive as text through `${NAME}` expansion (`max_turns: ${TURNS}`). */
function numeric(v: unknown): unknown {
  return typeof v === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v;
}

function int(min: number, max: number, msg: string) {
  return z.preprocess(
    numeric,
    z.number({ error: msg }).int({ error: msg }).min(min, { error: msg }).max(max, { error: msg }),
  );
}

function num(ok: (n: number) => boolean, msg: string) {
  return z.preprocess(numeric, z.number({ error: msg }).refine(ok, { error: msg }));
}

const posInt = () => int(1, Number.MAX_SAFE_INTEGER, "must be an integer > 0");
const nonNegInt = () => int(0, Number.MAX_SAFE_INTEGER, "must be an integer >= 0");

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, {
    error: (iss) => `${show(iss.input)} is not one of ${values.join(", ")}`,
  });
}

export function mapping<S extends z.ZodRawShape>(shape: S) {
  return z.strictObject(shape, { error: "must be a mapping of keys" });
}

export function list<T extends z.ZodType>(element: T) {
  return z.array(element, { error: "must be a list" });
}

/**
 * A section of the document: a mapping whose schema is built on its first use. `mur run` validates
 * its manifest before the readiness line, and building every section's schema there cost more
 * than the sections a manifest has (docs/benchmarks.md "Cost per session"). zod asks each field
 * whether it is optional (`optin`, `optout`) before parsing it, and a lazy schema answers by
 * building the one inside; a mapping is never optional itself (`.optional()` around it says so),
 * so the answer is given here, and a section the document does not have is never built.
 * tests/manifest/sections_property_test.ts holds the document's verdicts to the same schema built
 * whole.
 */
export function section<S extends z.ZodRawShape>(shape: () => S) {
  const lazy = z.lazy(() => mapping(shape()));
  for (const key of ["optin", "optout"]) {
    Object.defineProperty(lazy._zod, key, { value: undefined, writable: true, configurable: true });
  }
  return lazy;
}

/**
 * argv of a tool or hook. A string is one shell line, run as `sh -c <line>` (the contract writes
 * arrays; a string is the obvious shorthand and mirrors `done_check.command`).
 */
export const command = () =>
  z.preprocess(
    (v) => (typeof v === "string" ? (v.trim() === "" ? [] : ["sh", "-c", v]) : v),
    z.array(str(), {
      error: "must be a list of strings (program, then arguments) or one shell line",
    }).min(1, { error: "must name a program: a list of strings, program first" })
      .refine((argv) => argv[0] !== "", { error: "the program (first entry) must not be empty" }),
  );

const ENV_ENTRY = /^[A-Za-z_][A-Za-z0-9_]*(=[\s\S]*)?$/;
const BARE_BINARY = /^[^\s/]+$/;
const CAPSULE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** What model providers accept as a tool name (Anthropic's and OpenAI's common rule). */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Hook names end up in file names (`logs/hook-<name>.log`) and status texts. */
export const HOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const shellBinary = () =>
  str().refine((v) => BARE_BINARY.test(v), {
    error: (iss) =>
      `${show(iss.input)} is not a bare binary name (no '/', no spaces); it is looked up on PATH`,
  });

/** What is wrong with a `read_only` entry (a workdir-relative subtree), or null. */
export function subtreeProblem(v: string): string | null {
  if (v.trim() === "") return "must not be empty";
  if (v.startsWith("/")) return `${show(v)} must be a workdir-relative path`;
  if (v.split("/").includes("..")) return `${show(v)} must stay inside the workdir (no '..')`;
  return null;
}

/** A checked subtree as the read-only guard compares it: no `.` or empty parts, `.` for all. */
export function normalizeSubtree(p: string): string {
  const parts = p.split("/").filter((s) => s !== "" && s !== ".");
  return parts.length === 0 ? "." : parts.join("/");
}

const relativeSubtree = () =>
  str().superRefine((v, ctx) => {
    const problem = subtreeProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const scope = () =>
  z.string({ error: "must be a method name (a string)" }).refine(
    (v) => (SCOPES as readonly string[]).includes(v),
    {
      error: (iss) => `${show(iss.input)} is not a method name; scopes are ${SCOPES.join(", ")}`,
    },
  );

// ---- the document

const inferenceSchema = section(() => ({
  transport: oneOf(TRANSPORTS).optional(),
  // Checked against the transport in checkManifest, which can say which list applies.
  driver: str().optional(),
  model: nonEmpty().optional(),
  endpoint: str().optional(),
  api_key: str().optional(),
  script: nonEmpty().optional(),
  command: nonEmpty().optional(),
  env: list(
    str().refine((v) => ENV_ENTRY.test(v), {
      error: (iss) => `${show(iss.input)} must be NAME or NAME=value`,
    }),
  ).optional(),
  max_turns: posInt().optional(),
  max_tokens: posInt().optional(),
  max_session_tokens: posInt().optional(),
  system_prompt: str().optional(),
  system_prompt_file: nonEmpty().optional(),
  system_prompt_artifact: nonEmpty().optional(),
  idle_timeout_secs: num((n) => n > 0, "must be a number of seconds > 0").optional(),
}));

const lifecycleSchema = section(() => ({
  task_acceptance: oneOf(["none", "single", "queue"]).optional(),
  after_task: oneOf(["exit", "sleep"]).optional(),
  queue_depth: posInt().optional(),
  conversation: oneOf(["stateless", "threaded"]).optional(),
  max_task_reopens: nonNegInt().optional(),
  shell_grace_secs: num((n) => n >= 0, "must be a number of seconds >= 0").optional(),
  input_timeout_secs: num((n) => n > 0, "must be a number of seconds > 0").optional(),
  delegation_deadline_secs: num((n) => n > 0, "must be a number of seconds > 0").optional(),
  keep_working: mapping({
    limit: nonNegInt().optional(),
    message: nonEmpty(),
    until: nonEmpty().optional(),
  }).optional(),
  done_check: mapping({
    command: z.string({ error: "must be one shell command line (a string)" })
      .refine((v) => v.trim() !== "", { error: "must not be empty" }),
    limit: nonNegInt().optional(),
  }).optional(),
  history_limit: int(1, 1_000_000, "must be an integer from 1 to 1000000").optional(),
  direct_reply: z.preprocess(
    (v) => v === "true" ? true : v === "false" ? false : v,
    z.boolean({ error: "must be true or false" }),
  ).optional(),
}));

/** `outputs:` (docs/manifest.md): the size rules of published files. */
const outputsSchema = section(() => ({
  inline_max_bytes: int(0, 16_777_216, "must be an integer from 0 to 16777216").optional(),
  max_bytes: int(1, 4_294_967_296, "must be an integer from 1 to 4294967296").optional(),
}));

const contextSchema = section(() => ({
  max_tokens: posInt().optional(),
  seed_budget: num((n) => n >= 0 && n <= 1, "must be a fraction between 0 and 1").optional(),
  seed_overflow_margin: num((n) => n >= 0, "must be a fraction >= 0").optional(),
  compaction_threshold: num((n) => n > 0 && n <= 1, "must be a fraction > 0 and <= 1")
    .optional(),
}));

/** `true`/`false`, also as text through `${NAME}` expansion. */
export const bool = () =>
  z.preprocess(
    (v) => v === "true" ? true : v === "false" ? false : v,
    z.boolean({ error: "must be true or false" }),
  );

/**
 * A Standard Webhooks signing secret: `whsec_` and the base64 of at least 24 random bytes
 * (docs/push.md).
 */
const webhookSecret = () =>
  nonEmpty().refine((v) => {
    const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(v);
    if (!m) return false;
    try {
      return atob(m[1]).length >= 24;
    } catch {
      return false;
    }
  }, { error: "must be whsec_ followed by the base64 of at least 24 random bytes" });

const networkSchema = section(() => ({
  internal_port: int(1, 65535, "must be a port number between 1 and 65535").optional(),
  retried_sends: oneOf(["replay", "new_task"]).optional(),
  push_notifications: mapping({
    enabled: bool(),
    allow_private: bool().optional(),
    secret: webhookSecret().optional(),
  }).optional(),
  authentication: mapping({
    scheme: oneOf(["bearer"]).optional(),
    credentials: z.record(
      z.string(),
      mapping({ scopes: list(scope()) }),
      { error: "must be a mapping of credential name to {scopes: [...]}" },
    ).optional(),
  }).optional(),
}));

/** The OTLP/HTTP base URL spans go to (`<url>/v1/traces`): http or https, nothing else. */
const otlpUrl = () =>
  nonEmpty().refine((v) => {
    try {
      return ["http:", "https:"].includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, { error: (iss) => `${show(iss.input)} is not an http:// or https:// URL` });

/** OpenTelemetry export (docs/opentelemetry.md; src/otel/). */
const observabilitySchema = section(() => ({
  otel_endpoint: otlpUrl().optional(),
  otel_content: bool().optional(),
}));

/** `spawn.allow`: manifest paths whose names (spawn.ts) are distinct and not empty. */
const spawnAllow = () =>
  list(nonEmpty()).superRefine((paths, ctx) => {
    const seen = new Map<string, string>();
    for (const p of paths) {
      const name = spawnName(p);
      if (name === "" || name === "..") {
        ctx.addIssue({ code: "custom", message: `${show(p)} names no capsule folder or file` });
      } else if (seen.has(name)) {
        ctx.addIssue({
          code: "custom",
          message: `${show(p)} and ${
            show(seen.get(name))
          } both name a capsule '${name}'; the model names a child by that name, so it must be unique`,
        });
      } else seen.set(name, p);
    }
  });

/** `exports:` (docs/door.md "Peer tasks and trust"): what the capsule offers other capsules. */
const exportsSchema = section(() => ({
  peer_tasks: mapping({ accept: bool().optional() }).optional(),
}));

/** Publishing to Redis for `mur edge` (docs/edge.md; src/cluster/). */
const clusterSchema = section(() => ({
  redis: nonEmpty().refine((v) => typeof parseRedisUrl(v) !== "string", {
    error: (iss) => `${show(iss.input)}: ${parseRedisUrl(String(iss.input))}`,
  }),
  advertise: otlpUrl().optional(),
}));

const capabilitiesSchema = section(() => ({
  shell: mapping({ allow: list(shellBinary()).optional() }).optional(),
  filesystem: mapping({
    read_only: list(relativeSubtree()).optional(),
    ...filesystemContainmentKeys,
  }).optional(),
  spawn: mapping({ allow: spawnAllow().optional() }).optional(),
  network: capNetworkSchema.optional(),
  resources: resourcesSchema.optional(),
}));

/**
 * One `tools:` entry: `{builtin: request-input}`, `{builtin: publish}` or a command tool. One object with every key
 * optional (rather than a union) so zod reports unknown keys and the exact failing key; which
 * keys an entry needs is decided in checkManifest.
 */
const toolSchema = section(() => ({
  builtin: oneOf(BUILTIN_TOOLS).optional(),
  name: str().optional(),
  description: str().optional(),
  input_schema: z.record(z.string(), z.unknown(), {
    error: "must be a JSON Schema object (a mapping with type: object)",
  }).optional(),
  command: command().optional(),
  output: oneOf(["text", "data"]).optional(),
}));

const hookSchema = section(() => ({
  name: nonEmpty(),
  binding: oneOf(HOOK_BINDINGS).optional(),
  execution_mode: oneOf(["blocking", "async"]).optional(),
  commit_policy: oneOf(COMMIT_POLICIES).optional(),
  command: command(),
  output: oneOf(["text", "data"]).optional(),
}));

/**
 * One `artifacts:` entry (docs/manifest.md "artifacts"): a packaged tool, hook or skill in a
 * folder of its own. Which runtime, which keys go together and what `config` may hold are decided
 * in checkManifest, which can name the rule; the folder itself is read by ./artifacts.ts.
 */
const artifactSchema = section(() => ({
  name: nonEmpty(),
  version: nonEmpty().optional(),
  runtime: str().optional(),
  source: nonEmpty().optional(),
  local_source: bool().optional(),
  prompt_payload: bool().optional(),
  config: z.unknown().optional(),
  capabilities: z.unknown().optional(),
  gateway: z.unknown().optional(),
}));

export const manifestSchema = mapping({
  name: nonEmpty().refine((v) => CAPSULE_NAME.test(v), {
    error: (iss) =>
      `${
        show(iss.input)
      } must be letters, digits, '.', '_' or '-', starting with a letter or digit`,
  }),
  version: z.string({ error: 'must be a string; quote it, e.g. version: "0.1.0"' })
    .min(1, { error: "must not be empty" }),
  inference: inferenceSchema.optional(),
  lifecycle: lifecycleSchema.optional(),
  context: contextSchema.optional(),
  network: networkSchema.optional(),
  capabilities: capabilitiesSchema.optional(),
  containment: containmentSchema.optional(),
  observability: observabilitySchema.optional(),
  cluster: clusterSchema.optional(),
  outputs: outputsSchema.optional(),
  exports: exportsSchema.optional(),
  tools: list(toolSchema).optional(),
  hooks: list(hookSchema).optional(),
  artifacts: list(artifactSchema).optional(),
  approvals: approvalsSchema.optional(),
  mcp_servers: mcpServersSchema.optional(),
  openapi_services: openApiServicesSchema.optional(),
});

/** The manifest as written, after schema validation (snake_case, defaults not yet applied). */
export type ManifestDoc = z.output<typeof manifestSchema>;

// ---- validation

export function missing(path: string, why?: string): MurError {
  return new MurError(
    "E-MAN-001",
    `missing required key '${path}'${why ? `: ${why}` : ""}`,
  );
}

export function invalid(path: string, what: string, hint?: string): MurError {
  return new MurError("E-MAN-003", `${path}: ${what}`, hint);
}

export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur = root;
  for (const part of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[part];
  }
  return cur;
}

/**
 * Keys the schema does not know, as key paths (`foo.bar`, `tools[0].colour`) with where they sit
 * (`owner`, for the did-you-mean) and their own name, and a copy of `raw` without them. Only
 * strict-object complaints are read here; every other issue is left to validateManifest, which
 * runs on the cleaned copy.
 */
export function splitUnknownKeys(raw: unknown): {
  clean: unknown;
  unknown: { key: string; owner: PropertyKey[]; name: string }[];
} {
  const clean = structuredClone(raw);
  const result = manifestSchema.safeParse(clean);
  if (result.success) return { clean, unknown: [] };
  const unknown: { key: string; owner: PropertyKey[]; name: string }[] = [];
  for (const issue of result.error.issues) {
    if (issue.code !== "unrecognized_keys") continue;
    const owner = valueAt(clean, issue.path) as Record<string, unknown>;
    for (const key of issue.keys) {
      unknown.push({ key: keyPath([...issue.path, key]), owner: [...issue.path], name: key });
      delete owner[key];
    }
  }
  return { clean, unknown };
}
