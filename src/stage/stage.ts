/**
 * The staging phase (docs/design.md "Layout", docs/hooks.md "on-stage"): what `mur
 * run` does in the workdir before the session loop exists, after the manifest is loaded and the
 * workdir opened. One entry point, `stageCapsule`:
 *
 *   stage the operator's artifacts into workdir/tools/<name>/ → on-stage hooks (blocking, once,
 *   declaration order; a write-manifests answer is written to workdir/tools/<binary>/murmur.yaml)
 *   → read every tool manifest that appeared there (runtime tools) → the skill shelf
 *
 * No trace exists yet: every step is a line in logs/bootstrap.log, and a failure stops the launch
 * (E-RUN-051) before the door, the running record or the trace.
 */
import type { ContainmentPolicy } from "../containment/policy.ts";
import { stringify } from "yaml";
import { errorMessage, MurError } from "../errors.ts";
import { pathError } from "../path_errors.ts";
import { ARTIFACT_MANIFEST, readToolManifest, SKILL_FILE } from "../manifest/artifacts.ts";
import { RESERVED_TOOL_NAMES, TOOL_NAME } from "../manifest/schema.ts";
import {
  type BoundHook,
  type CommandToolConfig,
  firesAt,
  type Manifest,
} from "../manifest/types.ts";
import type { RuntimeArtifactField } from "../trace_events.ts";
import { callHook } from "../hooks/call.ts";
import { honours, unhonouredReason } from "../hooks/honour.ts";
import { HookLog } from "../hooks/log.ts";
import type { ToolManifestWrite } from "../hooks/output.ts";
import type { StageEvent } from "../session/hooks_api.ts";
import { bootstrapLog, type Workdir } from "../session/workdir.ts";
import { SkillShelf } from "../tools/skills.ts";

export interface StageOptions {
  manifest: Manifest;
  workdir: Workdir;
  sessionId: string;
  /** A hook call's deadline (`MURMUR_HOOK_TIMEOUT_MS`, 30 s). */
  hookTimeoutMs: number;
  /** A diagnostic line for stderr. */
  warn(line: string): void;
  /** What on-stage hooks run under (src/containment/); absent: advisory. */
  containment?: ContainmentPolicy;
}

export interface Staged {
  /** `workdir/tools/`. */
  toolsDir: string;
  /** Tools whose manifests appeared under `workdir/tools/` (origin runtime), to offer too. */
  runtimeTools: CommandToolConfig[];
  /** The capsule's skills: the operator's, and runtime ones found under `workdir/tools/`. */
  skills: SkillShelf;
  /** What was staged, as `session_start.runtime_artifacts` lists it. */
  artifacts: RuntimeArtifactField[];
}

/** Runs the staging phase's workdir steps; throws E-RUN-051 (or E-IO-00N) to stop the launch. */
export async function stageCapsule(o: StageOptions): Promise<Staged> {
  const { manifest: m, workdir } = o;
  const toolsDir = `${workdir.root}/tools`;
  const log = (line: string) => bootstrapLog(workdir, `staging: ${line}`);
  const operator = new Set([
    ...m.tools.filter((t) => t.kind === "command" && t.artifact).map((t) => t.name),
    ...(m.skills ?? []).map((s) => s.name),
  ]);
  writeOperatorArtifacts(m, toolsDir);
  log(`staged ${operator.size} artifact(s) into ${toolsDir}`);

  // Declared names win: a manifest that appeared under tools/ never replaces one of them.
  const declared = new Set<string>([
    ...m.capabilities.shell.allow,
    ...m.tools.map((t) => t.name),
    ...RESERVED_TOOL_NAMES,
  ]);
  const taken = new Set([...declared, ...operator]);
  for (const h of m.hooks.filter((h) => firesAt(h, "on-stage"))) {
    await runStageHook({ ...h, binding: "on-stage" }, o, { toolsDir, taken, log });
  }

  const runtimeTools = await readRuntimeTools(toolsDir, operator, declared, o, log);
  const runtimeNames = new Set(runtimeTools.map((t) => t.name));
  const skills = new SkillShelf(
    m.skills ?? [],
    toolsDir,
    (name) => declared.has(name) || runtimeNames.has(name),
  );
  const offered = skills.list().map((s) => s.name);
  log(
    `ready: runtime tools [${[...runtimeNames].join(", ")}], skills [${offered.join(", ")}]`,
  );
  return { toolsDir, runtimeTools, skills, artifacts: stagedArtifacts(m, runtimeTools, skills) };
}

/**
 * `session_start.runtime_artifacts`: the operator's artifacts in `artifacts:` order (tools,
 * hooks, then skills as the manifest groups them), then what appeared at staging by name.
 */
function stagedArtifacts(
  m: Manifest,
  runtimeTools: CommandToolConfig[],
  skills: SkillShelf,
): RuntimeArtifactField[] {
  const entry = (
    name: string,
    version: string,
    runtime: RuntimeArtifactField["runtime"],
    origin: RuntimeArtifactField["origin"],
  ): RuntimeArtifactField => ({ name, version, runtime, origin });
  return [
    ...m.tools.flatMap((t) =>
      t.kind === "command" && t.artifact
        ? [entry(t.name, t.artifact.version, "tool", "operator")]
        : []
    ),
    ...m.hooks.flatMap((h) =>
      h.artifact ? [entry(h.name, h.artifact.version, "hook", "operator")] : []
    ),
    ...(m.skills ?? []).map((sk) => entry(sk.name, sk.version, "skill", "operator")),
    ...runtimeTools.map((t) => entry(t.name, t.artifact?.version ?? "runtime", "tool", "runtime")),
    ...skills.list().filter((sk) => sk.skill.origin === "runtime").map((sk) =>
      entry(sk.name, sk.version, "skill", "runtime")
    ),
  ];
}

/**
 * `workdir/tools/<name>/`: each operator skill's `skill.md` and each packaged tool's manifest as
 * mur read it, so the model can look at what it was given.
 */
function writeOperatorArtifacts(m: Manifest, toolsDir: string): void {
  const write = (name: string, file: string, text: string) => {
    const path = `${toolsDir}/${name}/${file}`;
    try {
      Deno.mkdirSync(`${toolsDir}/${name}`, { recursive: true });
      Deno.writeTextFileSync(path, text);
    } catch (e) {
      throw pathError(e, { source: "the session's workdir", path, doing: "stage an artifact" });
    }
  };
  try {
    Deno.mkdirSync(toolsDir, { recursive: true });
  } catch (e) {
    throw pathError(e, {
      source: "the session's workdir",
      path: toolsDir,
      doing: "create the tools folder",
      expect: "folder",
    });
  }
  for (const s of m.skills ?? []) write(s.name, SKILL_FILE, s.text);
  for (const t of m.tools) {
    if (t.kind !== "command" || !t.artifact) continue;
    write(
      t.name,
      ARTIFACT_MANIFEST,
      stringify({
        name: t.name,
        version: t.artifact.version,
        runtime: "tool",
        description: t.description,
        input_schema: t.inputSchema,
        command: t.command,
      }),
    );
  }
}

/** One on-stage hook: a failure stops the launch; a write-manifests answer is committed. */
/** Where a stage hook's manifests go, the names they may not take, the bootstrap log. */
interface StageTarget {
  toolsDir: string;
  taken: Set<string>;
  log: (line: string) => void;
}

async function runStageHook(h: BoundHook, o: StageOptions, t: StageTarget): Promise<void> {
  const { toolsDir, log } = t;
  const hookLog = new HookLog(`${o.workdir.logs}/hook-${h.name}.log`);
  const ev: StageEvent = { shell_allow: o.manifest.capabilities.shell.allow, tools_dir: toolsDir };
  const out = await callHook(h, ev, {
    sessionId: o.sessionId,
    workdirRoot: o.workdir.root,
    timeoutMs: o.hookTimeoutMs,
    containment: o.containment,
  }, hookLog);
  if (!out.ok) {
    log(`on-stage hook ${h.name} failed: ${out.reason}; the launch stops`);
    throw stageError(`on-stage hook ${h.name} failed: ${out.reason}`, h.name, o.workdir);
  }
  const arm = out.arm;
  if (arm.arm === "none") {
    log(`on-stage hook ${h.name} answered none`);
    return;
  }
  if (arm.arm !== "write-manifests" || !honours(h, arm)) {
    // Loud, not fatal: the answer is discarded, as every binding does with an arm it does not
    // honour (docs/hooks.md "Answers and policies").
    const line = `hook ${h.name} answered ${arm.arm} on on-stage, but ${
      unhonouredReason(h, arm)
    }; the answer is discarded`;
    log(line);
    hookLog.line(`on-stage: ${line}`);
    o.warn(`[murmur] ${line} (logs/bootstrap.log)`);
    return;
  }
  for (const w of arm.manifests) writeManifest(w, h, o.workdir, t);
}

function writeManifest(
  w: ToolManifestWrite,
  h: BoundHook,
  workdir: Workdir,
  { toolsDir, taken, log }: StageTarget,
): void {
  const fail = (why: string) => {
    log(`on-stage hook ${h.name}: ${why}; the launch stops`);
    return stageError(
      `on-stage hook ${h.name} answered write_manifests, but ${why}`,
      h.name,
      workdir,
    );
  };
  if (!TOOL_NAME.test(w.binary_name)) {
    throw fail(
      `binary_name '${w.binary_name}' is not a tool name (1 to 64 letters, digits, '_' or '-')`,
    );
  }
  if (taken.has(w.binary_name)) {
    throw fail(
      `binary_name '${w.binary_name}' is the name of a tool or skill the capsule declares`,
    );
  }
  const folder = `${toolsDir}/${w.binary_name}`;
  try {
    Deno.mkdirSync(folder, { recursive: true });
    Deno.writeTextFileSync(`${folder}/${ARTIFACT_MANIFEST}`, w.content);
  } catch (e) {
    throw fail(`${folder}/${ARTIFACT_MANIFEST} could not be written: ${errorMessage(e)}`);
  }
  log(`on-stage hook ${h.name} wrote tools/${w.binary_name}/${ARTIFACT_MANIFEST}`);
}

/**
 * Every `workdir/tools/<name>/murmur.yaml` mur did not stage itself: a tool of runtime origin,
 * read with the packaged tool's rules. One that cannot be read stops the launch; one whose name
 * a declared tool holds is left out (said on stderr and in the log).
 */
async function readRuntimeTools(
  toolsDir: string,
  operator: Set<string>,
  declared: Set<string>,
  o: StageOptions,
  log: (line: string) => void,
): Promise<CommandToolConfig[]> {
  const names: string[] = [];
  for (const e of Deno.readDirSync(toolsDir)) {
    if (e.isDirectory && !operator.has(e.name)) names.push(e.name);
  }
  const out: CommandToolConfig[] = [];
  for (const name of names.sort()) {
    const folder = `${toolsDir}/${name}`;
    let text: string;
    try {
      text = await Deno.readTextFile(`${folder}/${ARTIFACT_MANIFEST}`);
    } catch {
      continue; // no manifest: a skill folder, or nothing mur reads
    }
    const label = `tools/${name}/${ARTIFACT_MANIFEST}`;
    if (!TOOL_NAME.test(name) || declared.has(name)) {
      const line = `${label} is left out: ${
        TOOL_NAME.test(name)
          ? `a declared tool is named '${name}'`
          : "its folder is not a tool name"
      }`;
      log(line);
      o.warn(`[murmur] ${line} (logs/bootstrap.log)`);
      continue;
    }
    try {
      out.push(
        await readToolManifest(text, {
          folder,
          label,
          name,
          artifact: { version: "runtime", origin: "runtime" },
        }),
      );
    } catch (e) {
      const why = e instanceof MurError ? e.format().replaceAll("\n", " ") : errorMessage(e);
      log(`${label} cannot be used: ${why}; the launch stops`);
      throw new MurError(
        "E-RUN-051",
        `the tool manifest ${label} in the workdir cannot be used: ${why}`,
        `see ${o.workdir.bootstrapLog}`,
      );
    }
    log(`runtime tool '${name}' from ${label}`);
  }
  return out;
}

function stageError(message: string, hook: string, workdir: Workdir): MurError {
  return new MurError(
    "E-RUN-051",
    `${message}; the launch stops`,
    `see ${workdir.bootstrapLog} and ${workdir.logs}/hook-${hook}.log`,
  );
}
