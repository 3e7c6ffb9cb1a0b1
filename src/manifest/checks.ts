/**
 * The manifest rules that span several keys (docs/manifest.md), run once the document's shape is
 * valid, in document order. Every broken rule is reported (through `fail`), not only the first:
 * a user fixes a manifest in one pass. Each message names the key path.
 */
import { ManifestErrors, MurError } from "../errors.ts";
import { checkArtifactGrant } from "./artifact_grants.ts";
import { mcpServerProblems } from "./mcp_servers.ts";
import { openApiServiceProblems } from "./openapi_services.ts";
import type { CommitPolicy, HookBinding } from "./types.ts";
import {
  ARTIFACT_CONFIG_MAX_BYTES,
  ARTIFACT_RUNTIMES,
  BINDING_POLICY,
  BUILTIN_TOOLS,
  DEFAULTS,
  HOOK_NAME,
  HTTP_DRIVERS,
  invalid,
  keyPath,
  type ManifestDoc,
  manifestSchema,
  missing,
  PROCESS_DRIVERS,
  PROVIDER_DRIVERS,
  RESERVED_CREDENTIAL,
  RESERVED_TOOL_NAMES,
  show,
  TOOL_NAME,
  UNSUPPORTED_RUNTIMES,
  valueAt,
} from "./schema.ts";

/** Reports one broken rule; checking goes on. */
type Fail = (e: MurError) => void;

/**
 * Schema validation plus the cross-key rules. Every problem is reported: one E-MAN error each,
 * thrown together as ManifestErrors (the cross-key rules run once the document's shape is valid).
 * `notes` name keys that are valid but ignored (e.g. `inference.command` under transport http).
 */
export function validateManifest(data: unknown): { doc: ManifestDoc; notes: string[] } {
  const result = manifestSchema.safeParse(data);
  if (!result.success) {
    const errors: MurError[] = [];
    const seen = new Set<string>();
    for (const issue of result.error.issues) {
      if (issue.code === "unrecognized_keys") continue;
      const path = keyPath(issue.path);
      if (seen.has(path)) continue; // one message per key
      seen.add(path);
      // Whatever the rule, a value that is not there is a missing key (enums report it as a bad
      // value).
      errors.push(
        issue.path.length > 0 && valueAt(data, issue.path) === undefined
          ? missing(path)
          : invalid(path || "manifest", issue.message),
      );
    }
    throw ManifestErrors.of(errors);
  }
  const errors: MurError[] = [];
  const notes = checkManifest(result.data, (e) => errors.push(e));
  if (errors.length > 0) throw ManifestErrors.of(errors);
  return { doc: result.data, notes };
}

/** The cross-key rules; returns notes about keys this configuration ignores. */
export function checkManifest(doc: ManifestDoc, fail: Fail): string[] {
  const notes = checkInference(doc.inference ?? {}, fail);
  checkNetwork(doc, fail);
  const shell = doc.capabilities?.shell?.allow ?? [];
  duplicates(shell, (i, j) =>
    fail(invalid(
      `capabilities.shell.allow[${j}]`,
      `${show(shell[j])} is listed twice (also [${i}])`,
    )));
  checkTools(doc.tools ?? [], shell, fail);
  checkHooks(doc.hooks ?? [], fail);
  checkArtifacts(doc, fail);
  for (const [name, s] of Object.entries(doc.mcp_servers ?? {})) {
    for (const [key, what] of mcpServerProblems(name, s)) {
      fail(invalid(`mcp_servers.${name}${key ? `.${key}` : ""}`, what));
    }
  }
  for (const [name, s] of Object.entries(doc.openapi_services ?? {})) {
    for (const [key, what] of openApiServiceProblems(name, s)) {
      fail(invalid(`openapi_services.${name}${key ? `.${key}` : ""}`, what));
    }
  }
  return notes;
}

function checkInference(inf: NonNullable<ManifestDoc["inference"]>, fail: Fail): string[] {
  const transport = inf.transport ?? DEFAULTS.transport;
  const allowed: readonly string[] = transport === "http" ? HTTP_DRIVERS : PROCESS_DRIVERS;
  const other: readonly string[] = transport === "http" ? PROCESS_DRIVERS : HTTP_DRIVERS;

  if (inf.driver === undefined) {
    if (transport === "process") {
      fail(missing("inference.driver", `transport process needs ${PROCESS_DRIVERS.join(" or ")}`));
      return [];
    }
    // A provider setting without a driver would otherwise silently run the scripted driver.
    const provider = (["model", "endpoint", "api_key"] as const).find((k) => inf[k] !== undefined);
    if (provider) {
      fail(missing(
        "inference.driver",
        `inference.${provider} is set, so name the provider driver (${
          PROVIDER_DRIVERS.join(", ")
        })`,
      ));
      return [];
    }
  } else if (!allowed.includes(inf.driver)) {
    let what = `${show(inf.driver)} is not one of ${allowed.join(", ")} (transport ${transport})`;
    if (other.includes(inf.driver)) {
      const needs = transport === "http" ? "process" : "http";
      what += `; ${show(inf.driver)} runs under transport ${needs}`;
    }
    fail(invalid("inference.driver", what));
    return [];
  }
  const driver = inf.driver ?? DEFAULTS.driver;

  if ((PROVIDER_DRIVERS as readonly string[]).includes(driver) && inf.model === undefined) {
    fail(missing("inference.model", `driver '${driver}' needs a model name`));
  }
  if (driver === "openai-compatible" && inf.endpoint === undefined) {
    fail(missing(
      "inference.endpoint",
      "driver 'openai-compatible' needs the provider's base URL (e.g. http://localhost:11434/v1)",
    ));
  }
  if (transport === "http" && inf.endpoint !== undefined && !isHttpUrl(inf.endpoint)) {
    fail(invalid("inference.endpoint", `${show(inf.endpoint)} is not an http:// or https:// URL`));
  }
  // Keys of the other transport or driver are ignored with a warning, not refused: the contract's
  // own example lists every inference key at once.
  const ignored: string[] = [];
  const ignore = (key: keyof typeof inf, why: string) => {
    if (inf[key] !== undefined) ignored.push(`key 'inference.${key}' is ignored: ${why}`);
  };
  if (driver !== "scripted") {
    ignore("script", `only driver 'scripted' reads a script (driver is '${driver}')`);
  }
  if (transport === "http") {
    ignore("command", "only transport process runs a harness command (transport is http)");
    ignore("env", "only transport process runs a harness with an environment (transport is http)");
  } else {
    const why =
      "under transport process the harness gets credentials and endpoint through inference.env";
    ignore("endpoint", why);
    ignore("api_key", why);
  }
  if (inf.system_prompt !== undefined && inf.system_prompt_file !== undefined) {
    fail(invalid(
      "inference.system_prompt_file",
      "cannot be set together with inference.system_prompt; keep one",
    ));
  }
  return ignored;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function checkNetwork(doc: ManifestDoc, fail: Fail): void {
  const credentials = doc.network?.authentication?.credentials ?? {};
  for (const name of Object.keys(credentials)) {
    const path = `network.authentication.credentials.${name}`;
    if (name === RESERVED_CREDENTIAL) {
      fail(invalid(
        path,
        "'operator' is reserved: the runtime always mints it with every scope; choose another name",
      ));
    } else if (name.trim() === "") fail(invalid(path, "a credential name must not be empty"));
  }
}

function checkTools(
  tools: NonNullable<ManifestDoc["tools"]>,
  shell: string[],
  fail: Fail,
): void {
  const names: string[] = [];
  tools.forEach((tool, i) => {
    const at = `tools[${i}]`;
    if (tool.builtin !== undefined) {
      const extra = Object.keys(tool).filter((k) => k !== "builtin");
      if (extra.length > 0) {
        fail(invalid(
          at,
          `a builtin entry takes only 'builtin' (found ${extra.map((k) => `'${k}'`).join(", ")})`,
        ));
      }
      names.push(tool.builtin);
      return;
    }
    if (tool.name === undefined) {
      fail(
        missing(
          `${at}.name`,
          "a tool entry is {builtin: request-input}, {builtin: publish} or a command tool",
        ),
      );
    } else if (!TOOL_NAME.test(tool.name)) {
      fail(invalid(
        `${at}.name`,
        `${
          show(tool.name)
        } must be 1 to 64 letters, digits, '_' or '-' (what model providers accept)`,
      ));
    } else if ((BUILTIN_TOOLS as readonly string[]).includes(tool.name)) {
      fail(invalid(
        `${at}.name`,
        `${show(tool.name)} is a builtin tool; declare it as {builtin: ${tool.name}}`,
      ));
    } else if (shell.includes(tool.name)) {
      fail(invalid(
        `${at}.name`,
        `${show(tool.name)} is already a shell tool from capabilities.shell.allow`,
      ));
    } else names.push(tool.name);
    if (tool.description === undefined) fail(missing(`${at}.description`));
    if (tool.command === undefined) fail(missing(`${at}.command`));
    const type = tool.input_schema?.type;
    if (type !== undefined && type !== "object") {
      fail(invalid(
        `${at}.input_schema.type`,
        `${show(type)} is not 'object' (a tool's input is one JSON object)`,
      ));
    }
  });
  duplicates(
    names,
    (i, j) =>
      fail(invalid(`tools[${j}]`, `${show(names[j])} is declared twice (also tools[${i}])`)),
  );
}

function checkHooks(hooks: NonNullable<ManifestDoc["hooks"]>, fail: Fail): void {
  hooks.forEach((hook, i) => {
    const at = `hooks[${i}] (${hook.name})`;
    if (!HOOK_NAME.test(hook.name)) {
      fail(invalid(
        `hooks[${i}].name`,
        `${
          show(hook.name)
        } must be letters, digits, '.', '_' or '-', starting with a letter or digit`,
      ));
    }
    const problem = hookPairProblem(hook.binding, hook.commit_policy, hook.execution_mode) ??
      hookOutputProblem(hook.binding, hook.execution_mode, hook.output);
    if (problem) fail(invalid(at, problem));
  });
  const names = hooks.map((h) => h.name);
  duplicates(
    names,
    (i, j) =>
      fail(invalid(`hooks[${j}]`, `${show(names[j])} is declared twice (also hooks[${i}])`)),
  );
}

/**
 * `output: data` (docs/hooks.md "Data artifacts"): only an answer that can become an artifact can
 * be data, and only a blocking `on-inference` hook's `artifact` answer is one.
 */
export function hookOutputProblem(
  binding: HookBinding | undefined,
  executionMode: "blocking" | "async" | undefined,
  output: "text" | "data" | undefined,
): string | null {
  if (output !== "data") return null;
  if (binding !== "on-inference") {
    return `output 'data' needs binding: on-inference (only a blocking on-inference hook's artifact answer is published)${
      binding ? `, not '${binding}'` : ""
    }`;
  }
  if (executionMode === "async") {
    return "output 'data' needs execution_mode: blocking (an async hook's answer has no task turn to join)";
  }
  return null;
}

/**
 * The valid binding / commit_policy / execution_mode combinations (docs/hooks.md "Answers and
 * policies"): each binding honours one policy besides `none`, a committing policy needs a
 * blocking hook, and `on-stage` runs blocking hooks only. Shared by `hooks:` entries and hook
 * artifacts (./artifacts.ts); null when the combination is valid.
 */
export function hookPairProblem(
  binding: HookBinding | undefined,
  commitPolicy: CommitPolicy | undefined,
  executionMode: "blocking" | "async" | undefined,
): string | null {
  const policy = commitPolicy ?? DEFAULTS.commitPolicy;
  if (binding === undefined) {
    // Unbound: every binding. A policy refusal needs the call it refuses.
    if (policy === "deny") {
      return "commit_policy 'deny' requires an explicit binding: 'on-shell' or 'on-tool-call'";
    }
    if (policy !== "none" && executionMode === "async") {
      return `commit_policy '${policy}' requires execution_mode: blocking; an async hook can only use commit_policy 'none'`;
    }
    return null;
  }
  const honored = BINDING_POLICY[binding];
  if (policy !== "none" && policy !== honored) {
    const honors = honored
      ? `honors commit_policy '${honored}'`
      : "honors only commit_policy 'none'";
    return `commit_policy '${policy}' is not valid for binding '${binding}'; binding '${binding}' ${honors}`;
  }
  if (binding === "on-stage" && executionMode === "async") {
    return "binding 'on-stage' runs only blocking hooks (the launch waits for it); execution_mode: async is not valid for it";
  }
  if (policy !== "none" && executionMode === "async") {
    return `commit_policy '${policy}' requires execution_mode: blocking; an async hook can only use commit_policy 'none'`;
  }
  return null;
}

/**
 * `artifacts:` entries (docs/manifest.md "artifacts"): a runtime mur runs, a local folder (mur
 * has no registry), keys that fit the runtime, a `config` mapping small enough for the
 * environment, names no other tool, hook or the runtime itself already holds.
 */
// Why long: each artifact's checks in the order their refusals are documented (docs/manifest.md
// "artifacts").
function checkArtifacts(doc: ManifestDoc, fail: Fail): void {
  const arts = doc.artifacts ?? [];
  const shell = doc.capabilities?.shell?.allow ?? [];
  const toolNames = (doc.tools ?? []).map((t) => t.builtin ?? t.name);
  const hookNames = (doc.hooks ?? []).map((h) => h.name);
  const seen = new Map<string, number>();
  // Why long: one artifact's checks in the order their refusals are documented (docs/manifest.md
  // "artifacts"), each a few lines with its own message.
  const checkOne = (a: (typeof arts)[number], i: number) => {
    const at = `artifacts[${i}]`;
    const runtime = a.runtime ?? "tool";
    if (!(ARTIFACT_RUNTIMES as readonly string[]).includes(runtime)) {
      const instead = UNSUPPORTED_RUNTIMES[runtime];
      fail(invalid(
        `${at}.runtime`,
        `${show(runtime)} is not supported: mur runs ${ARTIFACT_RUNTIMES.join(", ")} artifacts${
          instead ? `; ${instead}` : ""
        }`,
      ));
      return;
    }
    const pattern = runtime === "hook" ? HOOK_NAME : TOOL_NAME;
    if (!pattern.test(a.name)) {
      fail(invalid(
        `${at}.name`,
        runtime === "hook"
          ? `${
            show(a.name)
          } must be letters, digits, '.', '_' or '-', starting with a letter or digit`
          : `${
            show(a.name)
          } must be 1 to 64 letters, digits, '_' or '-' (the model calls it by this name)`,
      ));
    } else if (
      runtime !== "hook" && (RESERVED_TOOL_NAMES as readonly string[]).includes(a.name)
    ) {
      fail(
        new MurError(
          "E-CAP-013",
          `${at}.name: ${show(a.name)} is the name of a tool the runtime provides itself`,
          `rename the artifact; reserved: ${RESERVED_TOOL_NAMES.join(", ")}`,
        ),
      );
    } else if (runtime !== "hook" && shell.includes(a.name)) {
      fail(invalid(
        `${at}.name`,
        `${show(a.name)} is already a shell tool from capabilities.shell.allow`,
      ));
    } else if (runtime !== "hook" && toolNames.includes(a.name)) {
      fail(invalid(`${at}.name`, `${show(a.name)} is already declared under tools:`));
    } else if (runtime === "hook" && hookNames.includes(a.name)) {
      fail(invalid(`${at}.name`, `${show(a.name)} is already declared under hooks:`));
    } else if (seen.has(a.name)) {
      fail(invalid(at, `${show(a.name)} is declared twice (also artifacts[${seen.get(a.name)}])`));
    } else seen.set(a.name, i);

    if (a.source === undefined) {
      fail(missing(
        `${at}.source`,
        "mur has no artifact registry: name the artifact's folder (relative to the manifest's folder) with source: and local_source: true",
      ));
    } else if ((a.local_source ?? runtime === "skill") !== true) {
      fail(invalid(
        at,
        `artifact '${a.name}' declares 'source:' but does not declare 'local_source: true' (runtime: ${runtime})`,
      ));
    }
    if (a.prompt_payload !== undefined && runtime !== "skill") {
      fail(invalid(
        `${at}.prompt_payload`,
        `only a skill carries a prompt payload (its skill.md); this artifact's runtime is ${runtime}`,
      ));
    }
    if (a.capabilities !== undefined) checkArtifactGrant(a.capabilities, at, runtime, fail);
    if (a.gateway !== undefined) {
      fail(invalid(
        `${at}.gateway`,
        "a credential gateway belongs to a driver artifact; mur's drivers are built in (inference.driver, inference.api_key)",
      ));
    }
    if (a.config !== undefined) checkArtifactConfig(a.config, `${at}.config`, runtime, fail);
  };
  arts.forEach(checkOne);
  checkPromptArtifact(doc, fail);
}

/** `config`: a mapping, handed over as compact JSON of at most 64 KiB (E-CAP-010). */
function checkArtifactConfig(config: unknown, at: string, runtime: string, fail: Fail): void {
  if (runtime === "skill") {
    fail(invalid(at, "a skill runs nothing, so it takes no config"));
    return;
  }
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    fail(
      new MurError(
        "E-CAP-010",
        `${at}: must be a mapping of keys (it reaches the artifact as MURMUR_ARTIFACT_CONFIG, one JSON object)`,
      ),
    );
    return;
  }
  const bytes = new TextEncoder().encode(JSON.stringify(config)).length;
  if (bytes > ARTIFACT_CONFIG_MAX_BYTES) {
    fail(
      new MurError(
        "E-CAP-010",
        `${at}: is ${bytes} bytes as JSON; MURMUR_ARTIFACT_CONFIG holds at most ${ARTIFACT_CONFIG_MAX_BYTES}`,
        "keep large data in a file in the artifact's folder and name it in config",
      ),
    );
  }
}

/** `inference.system_prompt_artifact` names a skill artifact whose prompt payload is on. */
function checkPromptArtifact(doc: ManifestDoc, fail: Fail): void {
  const inf = doc.inference ?? {};
  const name = inf.system_prompt_artifact;
  if (name === undefined) return;
  const at = "inference.system_prompt_artifact";
  if (inf.system_prompt !== undefined || inf.system_prompt_file !== undefined) {
    fail(invalid(
      at,
      `cannot be set together with inference.${
        inf.system_prompt !== undefined ? "system_prompt" : "system_prompt_file"
      }; keep one`,
    ));
    return;
  }
  const a = (doc.artifacts ?? []).find((x) => x.name === name);
  if (!a) {
    fail(invalid(at, `${show(name)} names no entry of artifacts:`));
  } else if ((a.runtime ?? "tool") !== "skill") {
    fail(invalid(
      at,
      `${show(name)} is a ${
        a.runtime ?? "tool"
      } artifact; only a skill's text can be the system prompt`,
    ));
  } else if (a.prompt_payload === false) {
    fail(invalid(at, `${show(name)} declares prompt_payload: false`));
  }
}

/** Calls `found(first, again)` for every value listed again. */
function duplicates(values: string[], found: (first: number, again: number) => void): void {
  const seen = new Map<string, number>();
  values.forEach((v, j) => {
    const i = seen.get(v);
    if (i !== undefined) found(i, j);
    else seen.set(v, j);
  });
}
