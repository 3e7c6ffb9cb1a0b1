/**
 * The folders `artifacts:` entries name (docs/manifest.md "artifacts"), read at
 * load like every other file the manifest names: a skill's `skill.md`, a packaged tool's or
 * hook's own `murmur.yaml`. Each becomes what the rest of mur already runs: a command tool, a
 * command hook, or a skill. A packaged tool's manifest has the same shape whether the operator
 * declared it or an `on-stage` hook wrote it under `workdir/tools/<name>/` (src/stage/), so both
 * are read by `readToolManifest`.
 */
import { z } from "zod";
import { resolve } from "../paths.ts";
import { pathError } from "../path_errors.ts";
import { errorMessage, ManifestErrors, MurError } from "../errors.ts";
import { hookOutputProblem, hookPairProblem } from "./checks.ts";
import { artifactGrant } from "./artifact_grants.ts";
import {
  command,
  DEFAULTS,
  HOOK_BINDINGS,
  keyPath,
  type ManifestDoc,
  nonEmpty,
  oneOf,
  section,
  show,
  str,
} from "./schema.ts";
import { parseDocument } from "yaml";
import type { ArtifactOrigin, CommandToolConfig, HookConfig, SkillConfig } from "./types.ts";

/** The file a packaged tool or hook describes itself in, inside its folder. */
export const ARTIFACT_MANIFEST = "murmur.yaml";
/** The file a skill's text is in, inside its folder. */
export const SKILL_FILE = "skill.md";

const inputSchema = () =>
  z.record(z.string(), z.unknown(), {
    error: "must be a JSON Schema object (a mapping with type: object)",
  });

/**
 * A packaged tool's own `murmur.yaml`: what the model is told, and the command that runs. Built on
 * first use (a manifest with no artifacts never reads one).
 */
const toolManifestSchema = section(() => ({
  name: nonEmpty().optional(),
  version: nonEmpty().optional(),
  runtime: oneOf(["tool"]).optional(),
  description: str(),
  input_schema: inputSchema().optional(),
  command: command(),
}));

/** A hook artifact's own `murmur.yaml`: its binding, mode and policy, and its command. */
const hookManifestSchema = section(() => ({
  name: nonEmpty().optional(),
  version: nonEmpty().optional(),
  runtime: oneOf(["hook"]).optional(),
  binding: oneOf(HOOK_BINDINGS).optional(),
  execution_mode: oneOf(["blocking", "async"]).optional(),
  commit_policy: oneOf([
    "none",
    "write-manifests",
    "seed-context",
    "replace-context",
    "reopen-task",
    "deny",
  ]).optional(),
  command: command(),
  output: oneOf(["text", "data"]).optional(),
}));

export interface ReadArtifacts {
  tools: CommandToolConfig[];
  hooks: HookConfig[];
  skills: SkillConfig[];
}

type Entry = NonNullable<ManifestDoc["artifacts"]>[number];

/**
 * Reads every artifact's folder (relative to the manifest's folder `dir`); every problem is
 * reported, not only the first. checkManifest has already refused entries without a local
 * source and runtimes mur does not run.
 */
export async function readArtifacts(doc: ManifestDoc, dir: string): Promise<ReadArtifacts> {
  const out: ReadArtifacts = { tools: [], hooks: [], skills: [] };
  const bound = doc.inference?.system_prompt_artifact;
  const read = await Promise.allSettled(
    (doc.artifacts ?? []).map((a, i) => readOne(a, i, dir, a.name === bound)),
  );
  const failed: unknown[] = [];
  for (const r of read) {
    if (r.status === "rejected") {
      failed.push(...(r.reason instanceof ManifestErrors ? r.reason.errors : [r.reason]));
      continue;
    }
    const v = r.value;
    if (v.kind === "tool") out.tools.push(v.tool);
    else if (v.kind === "hook") out.hooks.push(v.hook);
    else out.skills.push(v.skill);
  }
  if (failed.length > 0) {
    throw failed.every((e) => e instanceof MurError) ? ManifestErrors.of(failed) : failed[0];
  }
  return out;
}

type One =
  | { kind: "tool"; tool: CommandToolConfig }
  | { kind: "hook"; hook: HookConfig }
  | { kind: "skill"; skill: SkillConfig };

async function readOne(a: Entry, i: number, dir: string, promptBound: boolean): Promise<One> {
  const runtime = a.runtime ?? "tool";
  const at = `artifacts[${i}] (${a.name})`;
  const folder = await artifactFolder(resolve(dir, a.source!), `artifacts[${i}].source`, runtime);
  const version = a.version ?? "local";
  const env = a.config !== undefined
    ? { MURMUR_ARTIFACT_CONFIG: JSON.stringify(a.config) }
    : undefined;
  if (runtime === "skill") {
    return { kind: "skill", skill: await readSkill(folder, a.name, version, promptBound, at) };
  }
  const file = `${folder}/${ARTIFACT_MANIFEST}`;
  const text = await readFile(file, at, `the ${runtime}'s own ${ARTIFACT_MANIFEST}`);
  const grant = artifactGrant(a.capabilities);
  if (runtime === "tool") {
    const tool = await readToolManifest(text, {
      folder,
      label: `${at}: ${a.source}/${ARTIFACT_MANIFEST}`,
      name: a.name,
      artifact: { version, origin: "operator" },
    });
    return {
      kind: "tool",
      tool: {
        ...tool,
        ...(env && { env }),
        ...(grant.env && { hostEnv: grant.env }),
        ...(grant.readOnly && { readOnly: grant.readOnly }),
      },
    };
  }
  const hook = await readHookManifest(text, folder, `${at}: ${a.source}/${ARTIFACT_MANIFEST}`, {
    name: a.name,
    version,
  });
  // Default-deny: a hook artifact sees the baseline and what it is granted (src/artifact_env.ts).
  return { kind: "hook", hook: { ...hook, ...(env && { env }), hostEnv: grant.env ?? [] } };
}

/** How a packaged tool's manifest is read: where it sits, how errors name it, what it is. */
export interface ToolManifestPlace {
  /** Absolute folder: the command's relative program resolves against it. */
  folder: string;
  /** The prefix of every error: which file this is. */
  label: string;
  /** The tool's name (the folder's or the entry's); a `name:` inside must agree. */
  name: string;
  artifact: ArtifactOrigin;
}

/** A packaged tool's `murmur.yaml` text → the command tool it describes, or E-MAN-00N. */
export async function readToolManifest(
  text: string,
  place: ToolManifestPlace,
): Promise<CommandToolConfig> {
  const doc = parseStrict(text, toolManifestSchema, place.label);
  if (doc.name !== undefined && doc.name !== place.name) {
    throw new MurError(
      "E-MAN-003",
      `${place.label}: name: ${show(doc.name)} is not the tool's name '${place.name}'`,
    );
  }
  const type = doc.input_schema?.type;
  if (type !== undefined && type !== "object") {
    throw new MurError(
      "E-MAN-003",
      `${place.label}: input_schema.type: ${
        show(type)
      } is not 'object' (a tool's input is one JSON object)`,
    );
  }
  const schema = { ...(doc.input_schema ?? { properties: {} }) };
  schema.type ??= "object";
  return {
    kind: "command",
    name: place.name,
    description: doc.description,
    inputSchema: schema,
    command: await argv(doc.command, place.folder, `${place.label}: command`),
    artifact: { ...place.artifact, version: doc.version ?? place.artifact.version },
  };
}

/**
 * A hook artifact's `murmur.yaml` → the command hook it describes; an invalid binding /
 * commit_policy / execution_mode combination is refused here, at staging, with the reference
 * runtime's sentence (`hook <name>@<version> invalid config: …`).
 */
async function readHookManifest(
  text: string,
  folder: string,
  label: string,
  id: { name: string; version: string },
): Promise<HookConfig> {
  const doc = parseStrict(text, hookManifestSchema, label);
  if (doc.name !== undefined && doc.name !== id.name) {
    throw new MurError(
      "E-MAN-003",
      `${label}: name: ${show(doc.name)} is not the hook's name '${id.name}'`,
    );
  }
  const version = doc.version ?? id.version;
  const problem = hookPairProblem(doc.binding, doc.commit_policy, doc.execution_mode) ??
    hookOutputProblem(doc.binding, doc.execution_mode, doc.output);
  if (problem) {
    throw new MurError("E-MAN-003", `hook ${id.name}@${version} invalid config: ${problem}`);
  }
  return {
    name: id.name,
    binding: doc.binding ?? null,
    executionMode: doc.execution_mode ?? DEFAULTS.executionMode,
    commitPolicy: doc.commit_policy ?? DEFAULTS.commitPolicy,
    command: await argv(doc.command, folder, `${label}: command`),
    artifact: { version, origin: "operator" },
    ...(doc.output === "data" && { output: "data" as const }),
  };
}

/**
 * A skill folder's `skill.md` → the skill. Its description (what the model is offered) is the
 * text's first non-empty line, without a Markdown heading's `#`s.
 */
export async function readSkill(
  folder: string,
  name: string,
  version: string,
  promptBound: boolean,
  at: string,
): Promise<SkillConfig> {
  const text = await readFile(`${folder}/${SKILL_FILE}`, at, "skill text");
  return {
    name,
    version,
    description: skillDescription(name, text),
    text,
    source: folder,
    promptBound,
  };
}

export function skillDescription(name: string, text: string): string {
  const first = text.split("\n").map((l) => l.trim()).find((l) => l !== "");
  const line = first?.replace(/^#+\s*/, "") ?? "";
  if (line === "") return `Skill ${name}: call it (no input) to read its text`;
  // A description is a line, not the text: a skill that is one long line is cut (by code point).
  const chars = [...line];
  return chars.length > DESCRIPTION_CHARS ? chars.slice(0, DESCRIPTION_CHARS).join("") + "…" : line;
}

/** How much of a skill's first line its description keeps. */
const DESCRIPTION_CHARS = 200;

/** YAML text → the schema's shape; unknown keys are errors here (no warnings to carry). */
function parseStrict<S extends z.ZodType>(text: string, schema: S, label: string): z.output<S> {
  const parsed = parseDocument(text, { uniqueKeys: true });
  const error = parsed.errors[0];
  if (error) {
    const pos = error.linePos?.[0];
    const reason = error.message.replace(/ at line \d+, column \d+:?[\s\S]*$/, "").trim();
    throw new MurError("E-MAN-002", `${label}${pos ? `:${pos.line}:${pos.col}` : ""}: ${reason}`);
  }
  let data: unknown;
  try {
    data = parsed.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (e) {
    throw new MurError("E-MAN-002", `${label}: ${errorMessage(e)}`);
  }
  const r = schema.safeParse(data);
  if (r.success) return r.data;
  const errors = r.error.issues.map((issue) => {
    const path = keyPath(issue.path) || "(top level)";
    if (issue.code === "unrecognized_keys") {
      return new MurError(
        "E-MAN-003",
        `${label}: ${path}: unknown key${issue.keys.length > 1 ? "s" : ""} ${
          issue.keys.map((k) => `'${k}'`).join(", ")
        }`,
      );
    }
    const absent = issue.path.length > 0 &&
      (data as Record<PropertyKey, unknown>)[issue.path[0]] === undefined;
    return absent
      ? new MurError("E-MAN-001", `${label}: missing required key '${path}'`)
      : new MurError("E-MAN-003", `${label}: ${path}: ${issue.message}`);
  });
  throw ManifestErrors.of(errors);
}

/** The folder a `source:` names: there, and a folder. */
async function artifactFolder(folder: string, at: string, runtime: string): Promise<string> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(folder);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new MurError(
        "E-IO-001",
        `${at}: ${runtime} source path not found: ${folder}`,
        "relative paths are resolved against the manifest's folder",
      );
    }
    throw pathError(e, {
      source: at,
      path: folder,
      doing: `reach the ${runtime}`,
      expect: "folder",
    });
  }
  if (!info.isDirectory) {
    throw new MurError(
      "E-IO-005",
      `${at}: ${folder} is a file; an artifact's source is its folder`,
      `the folder holds ${runtime === "skill" ? SKILL_FILE : ARTIFACT_MANIFEST}`,
    );
  }
  return folder;
}

async function readFile(file: string, at: string, what: string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new MurError("E-IO-001", `${at}: ${what} not found: ${file}`);
    }
    throw pathError(e, { source: at, path: file, doing: `read the ${what}`, expect: "file" });
  }
}

/** argv with a path-like program resolved against the artifact's folder; it must be there. */
async function argv(cmd: string[], folder: string, at: string): Promise<string[]> {
  const [program, ...args] = cmd;
  if (!program.includes("/")) return [program, ...args];
  const file = resolve(folder, program);
  try {
    const info = await Deno.stat(file);
    if (info.isDirectory) {
      throw new MurError("E-IO-005", `${at}: the program ${file} is a folder, not a file`);
    }
  } catch (e) {
    if (e instanceof MurError) throw e;
    if (e instanceof Deno.errors.NotFound) {
      throw new MurError(
        "E-IO-001",
        `${at}: program not found: ${file}`,
        "a relative program is resolved against the artifact's own folder",
      );
    }
    throw pathError(e, { source: at, path: file, doing: "reach the program", expect: "file" });
  }
  return [file, ...args];
}
