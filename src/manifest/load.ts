/**
 * From a path on disk to a validated, defaulted `Manifest` (docs/manifest.md):
 * read → YAML → drop unknown keys (warnings) → `${NAME}` expansion (env_expand.ts) → schema and
 * cross-key checks → defaults, relative paths resolved against the manifest's folder, system
 * prompt read (normalize.ts).
 */
import { parseDocument } from "yaml";
import { basename, resolve } from "../paths.ts";
import { errorMessage, ManifestErrors, MurError, warningLine } from "../errors.ts";
import { validateManifest } from "./checks.ts";
import { loadWarnings } from "./load_warnings.ts";
import { misspeltSections } from "./misspelt_sections.ts";
import { suggestKey } from "./suggest.ts";
import { indentHint } from "./yaml_hints.ts";
import { type Env, expandEnv } from "./env_expand.ts";
import { normalize } from "./normalize.ts";
import { splitUnknownKeys } from "./schema.ts";
import type { LoadedManifest } from "./types.ts";

export { expandEnv };

export const MANIFEST_FILE = "murmur.yaml";

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
    const misspelt = misspeltSections(raw, unknown, label);
    if (misspelt.length > 0) throw ManifestErrors.of(misspelt);
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
    // A YAML error's hint says what the indentation does; the file is still worth naming.
    if (e instanceof MurError && e.code === "E-MAN-002" && e.hint) {
      throw new MurError(e.code, e.message, `${e.hint}; fix the manifest at ${file}`);
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
    const hint = pos && indentHint(text, error.code, pos.line, pos.col);
    throw new MurError("E-MAN-002", `${where}: ${reason}`, hint);
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
