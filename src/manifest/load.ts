/**
 * From a path on disk to a validated, defaulted `Manifest` (contract §2):
 * read → YAML → drop unknown keys (warnings) → `${NAME}` expansion → schema and cross-key
 * checks → defaults, relative paths resolved against the manifest's folder, system prompt read.
 */
import { parseDocument } from "yaml";
import { basename, dirname, resolve } from "node:path";
import { pathError } from "../path_errors.ts";
import { errorMessage, ManifestErrors, MurError, warningLine } from "../errors.ts";
import { validateManifest } from "./checks.ts";
import { loadWarnings } from "./load_warnings.ts";
import { suggestKey } from "./suggest.ts";
import {
  DEFAULTS,
  invalid,
  keyPath,
  type ManifestDoc,
  PROCESS_DEFAULTS,
  splitUnknownKeys,
} from "./schema.ts";
import type {
  Credential,
  DriverName,
  HookConfig,
  InferenceConfig,
  LoadedManifest,
  Manifest,
  ProcessDriverName,
  ToolConfig,
} from "./types.ts";

export const MANIFEST_FILE = "murmur.yaml";

type Env = Record<string, string | undefined>;

/**
 * Load and validate a manifest. `path` is the file, or a folder holding `murmur.yaml`.
 * Throws a MurError: E-IO-001/002/003/005 (the manifest or a file it names cannot be read),
 * E-MAN-001/002/003 (every problem of a bad manifest at once, as one ManifestErrors), E-RUN-009
 * (system_prompt_file unreadable).
 */
export async function loadManifest(
  path: string,
  env: Env = Deno.env.toObject(),
): Promise<LoadedManifest> {
  const file = await manifestFile(path);
  const label = basename(file);
  const text = await readManifest(file);
  try {
    const raw = parseYaml(text, label);
    const { clean, unknown } = splitUnknownKeys(raw);
    const warnings = unknown.map(({ key, owner, name }) => {
      const near = suggestKey(owner, name);
      return warningLine(
        "W-SEC-019",
        `${label}: unknown key '${key}' is ignored${near ? `; did you mean '${near}'?` : ""}`,
      );
    });
    const problems: MurError[] = [];
    const expanded = expandEnv(clean, env, [], problems);
    if (problems.length > 0) throw ManifestErrors.of(problems);
    const { doc, notes } = validateManifest(expanded);
    warnings.push(...notes.map((note) => warningLine("W-SEC-019", `${label}: ${note}`)));
    const manifest = await normalize(doc, file);
    warnings.push(...loadWarnings(label, doc, manifest, env.PATH));
    return { manifest, warnings };
  } catch (e) {
    // Key paths alone do not say which file; the hint does, unless a better hint is there.
    if (e instanceof ManifestErrors && !e.hint) {
      throw new ManifestErrors(e.errors, `fix the manifest at ${file}`);
    }
    if (e instanceof MurError && e.code.startsWith("E-MAN-") && !e.hint) {
      throw new MurError(e.code, e.message, `fix the manifest at ${file}`);
    }
    throw e;
  }
}

async function manifestFile(path: string): Promise<string> {
  const abs = resolve(path);
  const notFound = (file: string) =>
    new MurError(
      "E-IO-001",
      `manifest not found: ${file}`,
      "pass --manifest with a murmur.yaml file or the folder holding one",
    );
  try {
    const info = await Deno.stat(abs);
    if (!info.isDirectory) return abs;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw notFound(abs);
    throw ioError(abs, e);
  }
  const inDir = resolve(abs, MANIFEST_FILE);
  try {
    await Deno.stat(inDir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw notFound(inDir);
    throw ioError(inDir, e);
  }
  return inDir;
}

async function readManifest(file: string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new MurError("E-IO-001", `manifest not found: ${file}`);
    }
    throw ioError(file, e);
  }
}

function ioError(file: string, e: unknown): MurError {
  const reason = errorMessage(e);
  if (e instanceof Deno.errors.PermissionDenied) {
    return new MurError("E-IO-002", `cannot read manifest ${file}: ${reason}`);
  }
  return new MurError("E-IO-003", `cannot read manifest ${file}: ${reason}`);
}

/** YAML text → plain data; the first syntax error becomes E-MAN-002 `file:line:col: reason`. */
export function parseYaml(text: string, label = MANIFEST_FILE): unknown {
  // merge: `<<: *defaults` works as YAML 1.1 users expect.
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, merge: true });
  const error = doc.errors[0];
  if (error) {
    const pos = error.linePos?.[0];
    const where = pos ? `${label}:${pos.line}:${pos.col}` : label;
    // yaml repeats the position and a source excerpt after the reason; the prefix carries it.
    const reason = error.message.replace(/ at line \d+, column \d+:?[\s\S]*$/, "").trim();
    throw new MurError("E-MAN-002", `${where}: ${reason}`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw new MurError("E-MAN-002", `${label}: ${errorMessage(e)}`);
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new MurError(
      "E-MAN-003",
      `${label}: the manifest must be a mapping of keys (name, version, inference, …)`,
    );
  }
  return dropNulls(data);
}

/**
 * `key:` with nothing after it reads as null in YAML; treat it as absent, so an empty
 * `lifecycle:` block means the defaults and an empty `name:` is a missing key.
 */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== null && v !== undefined) out[k] = dropNulls(v);
    }
    return out;
  }
  return value;
}

const REFERENCE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replace `${NAME}` in every string value from `env`. `$${` is the escape: it stands for a
 * literal `${` (so a hook's shell line can keep `$${HOME}` for the shell to expand). An unset
 * NAME, or a `${…}` that is not a plain variable name, is E-MAN-003 naming the key path.
 */
export function expandEnv(
  value: unknown,
  env: Env,
  path: PropertyKey[],
  problems?: MurError[],
): unknown {
  if (typeof value === "string") {
    try {
      return expandString(value, env, keyPath(path));
    } catch (e) {
      // Collected, so every unset variable is named at once; without a list the first throws.
      if (!problems || !(e instanceof MurError)) throw e;
      problems.push(e);
      return value;
    }
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, [...path, i], problems));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = expandEnv(v, env, [...path, k], problems);
    }
    return out;
  }
  return value;
}

function expandString(text: string, env: Env, at: string): string {
  if (!text.includes("${")) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("$${", i)) {
      out += "${";
      i += 3;
      continue;
    }
    if (text.startsWith("${", i)) {
      const end = text.indexOf("}", i + 2);
      const ref = end < 0 ? text.slice(i) : text.slice(i, end + 1);
      const name = end < 0 ? "" : text.slice(i + 2, end);
      if (!REFERENCE.test(name)) {
        throw invalid(
          at,
          `'${ref}' is not a variable reference mur expands; write \${NAME} (letters, digits, _), or $\${ for a literal '\${'`,
        );
      }
      const v = env[name];
      if (v === undefined) {
        throw invalid(
          at,
          `\${${name}} is not set in the environment`,
          `set ${name} in mur's environment, or write $\${${name}} for the literal text`,
        );
      }
      out += v;
      i = end + 1;
      continue;
    }
    out += text[i];
    i++;
  }
  return out;
}

// ---- normalization: defaults, paths, the system prompt

async function normalize(doc: ManifestDoc, file: string): Promise<Manifest> {
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
    },
    observability: {
      ...(doc.observability?.otel_endpoint !== undefined && {
        otelEndpoint: doc.observability.otel_endpoint,
      }),
      otelContent: doc.observability?.otel_content ?? false,
    },
    tools: [],
    hooks: [],
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
  };
}

async function hook(
  h: NonNullable<ManifestDoc["hooks"]>[number],
  i: number,
  dir: string,
): Promise<HookConfig> {
  return {
    name: h.name,
    binding: h.binding,
    executionMode: h.execution_mode ?? DEFAULTS.executionMode,
    commitPolicy: h.commit_policy ?? DEFAULTS.commitPolicy,
    command: await argv(h.command, dir, `hooks[${i}].command`),
  };
}

/** `./docs/` → `docs`: read_only entries are compared component-wise later. */
function normalizeSubtree(p: string): string {
  const parts = p.split("/").filter((s) => s !== "" && s !== ".");
  return parts.length === 0 ? "." : parts.join("/");
}
