/**
 * The scripted driver's script (docs/scripted.md): its document shape, the zod schema that checks
 * it, and loading it from a YAML file. The `Script` type is the YAML document as written
 * (snake_case, optional keys left out), so tests anywhere can write a script as a TypeScript
 * literal and hand it to `createScriptedDriver` without going through YAML.
 *
 * Every error names the file and the exact key path (`tasks[0].turns[1].steps[2].repeat: …`),
 * because a user reads it as `error[E-MAN-003]: <message>` with nothing else to go on. Objects
 * are strict: a script is test tooling, and a misspelt key (`delay: 50`) silently ignored would
 * make a test pass for the wrong reason.
 */
import { indentHint } from "../manifest/yaml_hints.ts";
import { z } from "zod";
import YAML from "yaml";
import { errorMessage, MurError } from "../errors.ts";
import { pathError } from "../path_errors.ts";

/** Why a scripted `error` step fails; the same words as `DriverErrorCause`. */
export const SCRIPT_ERROR_CAUSES = [
  "driver_error",
  "credential_rejected",
  "malformed_response",
] as const;
export type ScriptErrorCause = (typeof SCRIPT_ERROR_CAUSES)[number];

/** A tool call the model makes; its input JSON streams in `chunks` pieces (default 1). */
export interface ScriptToolCall {
  /** Default `toolu_scripted_<turn>_<n>` (n counts calls within the turn, from 1). */
  id?: string;
  name: string;
  /** Default `{}`. */
  input?: Record<string, unknown>;
  chunks?: number;
  /** Milliseconds between the input's pieces (default 0). */
  chunk_delay_ms?: number;
}

/**
 * One step. Exactly one action key (`text`, `thinking`, `tool_call`, `usage`, `error`), or
 * `delay_ms` alone. `delay_ms` beside an action is waited before the action, on every
 * repetition; `repeat` (default 1) plays the step that many times; `error_cause` only goes
 * with `error` (default `driver_error`).
 */
export interface ScriptStep {
  text?: string;
  thinking?: string;
  tool_call?: ScriptToolCall;
  usage?: { input_tokens: number; output_tokens: number };
  error?: string;
  error_cause?: ScriptErrorCause;
  delay_ms?: number;
  repeat?: number;
}

export interface ScriptTurn {
  steps: ScriptStep[];
  /** The turn ends cut at the output cap: `finish {stopReason: "max_tokens", maxTokensCut}`. */
  max_tokens?: boolean;
}

/**
 * One task entry. `match` is a regex on the task text, `match_message_id` one on the A2A message
 * id that started the task; with both, both must match; with neither, the entry matches any
 * task (a fallback). The first matching entry wins.
 */
export interface ScriptTask {
  match?: string;
  match_message_id?: string;
  turns: ScriptTurn[];
}

export interface Script {
  tasks: ScriptTask[];
}

// ---- schema: every rule carries its own message so each issue reads as `<path>: <rule>`.

/** Keys of a step that are an action; a step has exactly one (or is a bare `delay_ms`). */
const ACTION_KEYS = ["text", "thinking", "tool_call", "usage", "error"] as const;

function typeError(kind: string) {
  return (iss: { input: unknown }) => iss.input === undefined ? "is required" : `must be ${kind}`;
}

const str = () => z.string({ error: typeError("a string") });
const nonEmpty = () => str().min(1, { error: "must not be empty" });

function int(min: number) {
  const msg = `must be an integer >= ${min}`;
  return z.number({ error: typeError(`an integer >= ${min}`) }).int({ error: msg }).min(min, {
    error: msg,
  });
}

const regex = () =>
  str().superRefine((src, ctx) => {
    try {
      new RegExp(src);
    } catch (e) {
      ctx.addIssue({
        code: "custom",
        message: `is not a valid regular expression (${errorMessage(e)})`,
      });
    }
  });

const toolCallSchema = z.strictObject({
  id: nonEmpty().optional(),
  name: nonEmpty(),
  input: z.record(z.string(), z.unknown(), { error: typeError("a mapping (an object)") })
    .optional(),
  chunks: int(1).optional(),
  chunk_delay_ms: int(0).optional(),
}, { error: typeError("a mapping with name (and id, input, chunks, chunk_delay_ms)") });

const usageSchema = z.strictObject({
  input_tokens: int(0),
  output_tokens: int(0),
}, { error: typeError("a mapping with input_tokens and output_tokens") });

const stepSchema = z.strictObject({
  text: str().optional(),
  thinking: str().optional(),
  tool_call: toolCallSchema.optional(),
  usage: usageSchema.optional(),
  error: str().optional(),
  error_cause: z.enum(SCRIPT_ERROR_CAUSES, {
    error: `must be one of ${SCRIPT_ERROR_CAUSES.join(", ")}`,
  }).optional(),
  delay_ms: int(0).optional(),
  repeat: int(1).optional(),
}, { error: typeError("a mapping") }).superRefine((step, ctx) => {
  const actions = ACTION_KEYS.filter((k) => step[k] !== undefined);
  if (actions.length > 1) {
    ctx.addIssue({
      code: "custom",
      message: `a step has one action, found ${actions.join(" and ")}; split it into steps`,
    });
  } else if (actions.length === 0 && step.delay_ms === undefined) {
    ctx.addIssue({
      code: "custom",
      message: `a step needs one of ${ACTION_KEYS.join(", ")}, or delay_ms alone`,
    });
  }
  if (step.error_cause !== undefined && step.error === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["error_cause"],
      message: "goes only beside error",
    });
  }
});

const turnSchema = z.strictObject({
  steps: z.array(stepSchema, { error: typeError("a list of steps") }),
  max_tokens: z.boolean({ error: typeError("true or false") }).optional(),
}, { error: typeError("a mapping with steps") });

const taskSchema = z.strictObject({
  match: regex().optional(),
  match_message_id: regex().optional(),
  turns: z.array(turnSchema, { error: typeError("a list of turns") }),
}, { error: typeError("a mapping with turns") });

const scriptSchema = z.strictObject({
  tasks: z.array(taskSchema, { error: typeError("a list of task entries") }),
}, { error: typeError("a mapping with tasks") });

// The schema's output is the Script type; this line fails to compile if the two drift apart.
const _sameShape: (s: z.output<typeof scriptSchema>) => Script = (s) => s;

/** `tasks[0].turns[1]` from zod's `["tasks", 0, "turns", 1]`. */
function keyPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

const HINT = "see the scripted driver's script format (docs/scripted.md)";

/**
 * The first issue as `<where>: <what>`; more issues are counted, not listed. An unknown key goes
 * first: a misspelt `turnz` also makes `turns` missing, and the typo is the one to show.
 */
function describe(issues: readonly z.core.$ZodIssue[]): string {
  const issue = issues.find((i) => i.code === "unrecognized_keys") ?? issues[0];
  let where = keyPath(issue.path);
  let what = issue.message;
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((k) => `'${k}'`).join(", ");
    what = `unknown key${issue.keys.length > 1 ? "s" : ""} ${keys}`;
  }
  if (where === "") where = "(top level)";
  const n = issues.length - 1;
  const more = n === 0 ? "" : ` (and ${n} more problem${n === 1 ? "" : "s"})`;
  return `${where}: ${what}${more}`;
}

/**
 * Check an already-parsed document (e.g. from YAML) and return it as a Script. `label` names the
 * source in messages (the file path). Throws `E-MAN-003` naming the key path.
 */
export function validateScript(value: unknown, label: string): Script {
  // An empty file parses to null; read it as an empty mapping so the message names `tasks`.
  const result = scriptSchema.safeParse(value ?? {});
  if (!result.success) {
    throw new MurError("E-MAN-003", `${label}: ${describe(result.error.issues)}`, HINT);
  }
  return result.data;
}

/**
 * Parse a script from YAML text. A YAML syntax error is `E-MAN-002` with line and column, as
 * for the manifest (docs/manifest.md); a document of the wrong shape is `E-MAN-003`.
 */
export function parseScript(text: string, label: string): Script {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    if (e instanceof YAML.YAMLParseError) {
      // yaml's message already ends its first line with "at line L, column C:"; the rest is an
      // excerpt of the file, which a one-line diagnostic does without.
      const first = e.message.split("\n")[0].replace(/:$/, "");
      // A mis-indented line is said in words too, as for the manifest (yaml_hints.ts).
      const at = e.linePos?.[0];
      const words = at && indentHint(text, e.code, at.line, at.col);
      throw new MurError(
        "E-MAN-002",
        `${label}: YAML syntax error: ${first}`,
        words ? `${words}; ${HINT}` : HINT,
      );
    }
    throw e;
  }
  return validateScript(doc, label);
}

/** Read and check a script file. A missing file is `E-IO-001`. */
export async function loadScript(path: string): Promise<Script> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new MurError(
        "E-IO-001",
        `script file not found: ${path}`,
        "inference.script is relative to the manifest's folder; create the file or fix the path",
      );
    }
    throw pathError(e, {
      source: "inference.script",
      path,
      doing: "read the script",
      expect: "file",
    });
  }
  return parseScript(text, path);
}
