/**
 * A checked manifest document → the `Manifest` the runtime reads (docs/manifest.md): defaults
 * filled in, paths resolved against the manifest's folder (a program or file a key names must be
 * there: every one missing is named), the system prompt read.
 */
import { dirname, resolve } from "../paths.ts";
import { pathError } from "../path_errors.ts";
import { errorMessage, ManifestErrors, MurError } from "../errors.ts";
import { DEFAULTS, type ManifestDoc, normalizeSubtree, PROCESS_DEFAULTS } from "./schema.ts";
import { spawnName } from "./spawn.ts";
import { readArtifacts } from "./artifacts.ts";
import { declaredContainment } from "./containment_keys.ts";
import { approvalsConfig } from "./approvals.ts";
import { normalizeMcpServers } from "./mcp_servers.ts";
import { normalizeOpenApiServices } from "./openapi_services.ts";
import type {
  Credential,
  DriverName,
  HookConfig,
  InferenceConfig,
  Manifest,
  ProcessDriverName,
  ToolConfig,
} from "./types.ts";

/** `{[key]: value}`, or nothing when value is undefined. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

// Why long: one mapping from the manifest document to the normalized Manifest, block by block as
// docs/manifest.md lists them.
export async function normalize(doc: ManifestDoc, file: string): Promise<Manifest> {
  const dir = dirname(file);
  const inf = doc.inference ?? {};
  const lc = doc.lifecycle ?? {};
  const ctx = doc.context ?? {};
  const auth = doc.network?.authentication;

  const manifest: Manifest = {
    name: doc.name,
    version: doc.version,
    path: file,
    dir,
    inference: await inference(inf, dir),
    lifecycle: {
      taskAcceptance: lc.task_acceptance ?? DEFAULTS.taskAcceptance,
      afterTask: lc.after_task ?? DEFAULTS.afterTask,
      queueDepth: lc.queue_depth ?? DEFAULTS.queueDepth,
      conversation: lc.conversation ?? DEFAULTS.conversation,
      maxTaskReopens: lc.max_task_reopens ?? DEFAULTS.maxTaskReopens,
      shellGraceSecs: lc.shell_grace_secs ?? DEFAULTS.shellGraceSecs,
      ...(lc.input_timeout_secs !== undefined && { inputTimeoutSecs: lc.input_timeout_secs }),
      ...(lc.delegation_deadline_secs !== undefined && {
        delegationDeadlineSecs: lc.delegation_deadline_secs,
      }),
      ...(lc.keep_working && {
        keepWorking: {
          limit: lc.keep_working.limit ?? DEFAULTS.keepWorkingLimit,
          message: lc.keep_working.message,
          ...(lc.keep_working.until !== undefined && { until: lc.keep_working.until }),
        },
      }),
      ...(lc.done_check && {
        doneCheck: {
          command: lc.done_check.command,
          limit: lc.done_check.limit ?? DEFAULTS.doneCheckLimit,
        },
      }),
      // Absent keys stay absent: their defaults (DEFAULTS) are read where they are used.
      ...(lc.history_limit !== undefined && { historyLimit: lc.history_limit }),
      ...(lc.direct_reply !== undefined && { directReply: lc.direct_reply }),
    },
    context: {
      ...(ctx.max_tokens !== undefined && { maxTokens: ctx.max_tokens }),
      seedBudget: ctx.seed_budget ?? DEFAULTS.seedBudget,
      seedOverflowMargin: ctx.seed_overflow_margin ?? DEFAULTS.seedOverflowMargin,
      compactionThreshold: ctx.compaction_threshold ?? DEFAULTS.compactionThreshold,
    },
    network: {
      ...(doc.network?.internal_port !== undefined && {
        internalPort: doc.network.internal_port,
      }),
      retriedSends: doc.network?.retried_sends ?? DEFAULTS.retriedSends,
      ...(doc.network?.push_notifications?.enabled && {
        pushNotifications: {
          allowPrivate: doc.network.push_notifications.allow_private ?? false,
          ...(doc.network.push_notifications.secret !== undefined && {
            secret: doc.network.push_notifications.secret,
          }),
        },
      }),
      ...(auth && {
        authentication: {
          scheme: DEFAULTS.authScheme,
          credentials: Object.entries(auth.credentials ?? {}).map(
            ([name, c]): Credential => ({ name, scopes: [...new Set(c.scopes)] }),
          ),
        },
      }),
    },
    capabilities: {
      shell: { allow: doc.capabilities?.shell?.allow ?? [] },
      filesystem: {
        readOnly: (doc.capabilities?.filesystem?.read_only ?? []).map(normalizeSubtree),
      },
      ...(doc.capabilities?.spawn?.allow && {
        spawn: {
          allow: doc.capabilities.spawn.allow.map((p) => ({
            name: spawnName(p),
            path: resolve(dir, p),
          })),
        },
      }),
    },
    ...optional("containment", declaredContainment(doc)),
    observability: {
      ...(doc.observability?.otel_endpoint !== undefined && {
        otelEndpoint: doc.observability.otel_endpoint,
      }),
      otelContent: doc.observability?.otel_content ?? false,
    },
    ...(doc.cluster && {
      cluster: {
        redis: doc.cluster.redis,
        ...(doc.cluster.advertise !== undefined && { advertise: doc.cluster.advertise }),
      },
    }),
    ...(doc.outputs && {
      outputs: {
        inlineMaxBytes: doc.outputs.inline_max_bytes ?? DEFAULTS.inlineMaxBytes,
        maxBytes: doc.outputs.max_bytes ?? DEFAULTS.maxFileBytes,
      },
    }),
    ...(doc.exports?.peer_tasks?.accept === true && { exports: { peerTasks: { accept: true } } }),
    tools: [],
    hooks: [],
    ...(doc.approvals && { approvals: approvalsConfig(doc.approvals) }),
    ...(doc.mcp_servers && { mcpServers: normalizeMcpServers(doc.mcp_servers, dir) }),
    ...(doc.openapi_services &&
      { openApiServices: normalizeOpenApiServices(doc.openapi_services, dir) }),
  };
  // Every program path that is not there is named, not only the first.
  const tools = await Promise.allSettled((doc.tools ?? []).map((t, i) => tool(t, i, dir)));
  const hooks = await Promise.allSettled((doc.hooks ?? []).map((h, i) => hook(h, i, dir)));
  const failed = [...tools, ...hooks].flatMap((r) => r.status === "rejected" ? [r.reason] : []);
  if (failed.length > 0) {
    throw failed.every((e) => e instanceof MurError) ? ManifestErrors.of(failed) : failed[0];
  }
  manifest.tools = tools.map((r) => (r as PromiseFulfilledResult<ToolConfig>).value);
  manifest.hooks = hooks.map((r) => (r as PromiseFulfilledResult<HookConfig>).value);
  if (doc.artifacts?.length) {
    // Packaged tools and hooks join the declared ones after them, in artifacts: order.
    const art = await readArtifacts(doc, dir);
    manifest.tools.push(...art.tools);
    manifest.hooks.push(...art.hooks);
    manifest.skills = art.skills;
    const bound = art.skills.find((sk) => sk.promptBound);
    if (bound) {
      // The skill's text verbatim, as a system_prompt_file's (docs/manifest.md "artifacts").
      manifest.inference.systemPrompt = bound.text;
      manifest.inference.systemPromptSource = "manifest";
      manifest.inference.systemPromptArtifact = bound.name;
    }
  }
  return manifest;
}

async function inference(
  inf: NonNullable<ManifestDoc["inference"]>,
  dir: string,
): Promise<InferenceConfig> {
  const transport = inf.transport ?? DEFAULTS.transport;
  const driver = (inf.driver ?? DEFAULTS.driver) as DriverName;
  const out: InferenceConfig = {
    transport,
    driver,
    maxTurns: inf.max_turns ?? DEFAULTS.maxTurns,
    maxTokens: inf.max_tokens ?? DEFAULTS.maxTokens,
    systemPromptSource: "none",
    idleTimeoutSecs: inf.idle_timeout_secs ?? DEFAULTS.idleTimeoutSecs,
  };
  if (inf.model !== undefined) out.model = inf.model;
  if (transport === "http") {
    if (inf.endpoint !== undefined) out.endpoint = inf.endpoint;
    if (inf.api_key !== undefined) out.apiKey = inf.api_key;
  }
  if (inf.max_session_tokens !== undefined) out.maxSessionTokens = inf.max_session_tokens;
  // No script under the scripted driver means its built-in default script (one short text
  // turn per task), so a capsule with no inference block runs with nothing else on disk.
  if (inf.script !== undefined && driver === "scripted") {
    out.script = await existing(resolve(dir, inf.script), "inference.script", "script");
  }
  if (transport === "process") {
    const defaults = PROCESS_DEFAULTS[driver as ProcessDriverName];
    const command = inf.command ?? defaults.command;
    out.command = command.includes("/") ? resolve(dir, command) : command;
    out.env = inf.env ?? [...defaults.env];
  }
  if (inf.system_prompt !== undefined) {
    out.systemPrompt = inf.system_prompt.trim();
    out.systemPromptSource = "manifest";
  } else if (inf.system_prompt_file !== undefined) {
    const file = resolve(dir, inf.system_prompt_file);
    try {
      out.systemPrompt = await Deno.readTextFile(file);
    } catch (e) {
      throw new MurError(
        "E-RUN-009",
        `inference.system_prompt_file: cannot read ${file}: ${errorMessage(e)}`,
        "the path is relative to the manifest's folder",
      );
    }
    out.systemPromptSource = "manifest";
  }
  return out;
}

/**
 * A file the manifest names must exist at load, and be a file, so a typo stops `mur run` before
 * it starts.
 */
async function existing(file: string, at: string, what: string): Promise<string> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new MurError(
        "E-IO-001",
        `${at}: ${what} not found: ${file}`,
        "relative paths are resolved against the manifest's folder",
      );
    }
    throw pathError(e, { source: at, path: file, doing: `reach the ${what}`, expect: "file" });
  }
  if (info.isDirectory) {
    throw new MurError(
      "E-IO-005",
      `${at}: the ${what} ${file} is a folder, not a file`,
      "name the file itself; relative paths are resolved against the manifest's folder",
    );
  }
  return file;
}

/** argv with a path-like program (`./tools/x.sh`) resolved against the manifest folder. */
async function argv(command: string[], dir: string, at: string): Promise<string[]> {
  const [program, ...args] = command;
  if (!program.includes("/")) return [program, ...args]; // bare name: PATH lookup at run time
  return [await existing(resolve(dir, program), at, "program"), ...args];
}

async function tool(
  t: NonNullable<ManifestDoc["tools"]>[number],
  i: number,
  dir: string,
): Promise<ToolConfig> {
  if (t.builtin !== undefined) return { kind: "builtin", name: t.builtin };
  // checkManifest guarantees name, description and command on a command tool.
  const schema = { ...(t.input_schema ?? { properties: {} }) };
  schema.type ??= "object";
  return {
    kind: "command",
    name: t.name!,
    description: t.description!,
    inputSchema: schema,
    command: await argv(t.command!, dir, `tools[${i}].command`),
    ...(t.output === "data" && { output: "data" as const }),
  };
}

async function hook(
  h: NonNullable<ManifestDoc["hooks"]>[number],
  i: number,
  dir: string,
): Promise<HookConfig> {
  return {
    name: h.name,
    binding: h.binding ?? null,
    executionMode: h.execution_mode ?? DEFAULTS.executionMode,
    commitPolicy: h.commit_policy ?? DEFAULTS.commitPolicy,
    command: await argv(h.command, dir, `hooks[${i}].command`),
    ...(h.output === "data" && { output: "data" as const }),
  };
}
