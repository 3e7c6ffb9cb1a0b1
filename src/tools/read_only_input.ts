/**
 * Writes a (non-shell) tool call names in its input: keys that name a destination, a path beside
 * content, schema formats (`murmur-destination`, `murmur-opaque`) and `murmur-destinations`
 * templates. Best effort by design: docs/tools.md (`read_only`).
 */
import type { Candidate } from "./read_only_shell.ts";

const DEST_KEYS = new Set([
  "dest",
  "dest_path",
  "destination",
  "destination_path",
  "target_path",
  "output_path",
  "out_path",
  "new_path",
  "to",
]);
const PATH_KEYS = new Set(["path", "file_path", "filepath", "filename", "file"]);
const CONTENT_KEYS = new Set([
  "content",
  "contents",
  "text",
  "data",
  "body",
  "new_str",
  "new_string",
  "replacement",
  "patch",
  "diff",
]);

function fold(key: string): string {
  return key.toLowerCase().replace(/-/g, "_");
}

function strings(v: unknown): string[] {
  if (typeof v === "string") return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === "string");
  return [];
}

function asSchema(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : {};
}

/** Write candidates of a tool input, walking nested objects with their sub-schemas. */
export function inputWrites(
  input: Record<string, unknown>,
  schema: Record<string, unknown>,
): Candidate[] {
  const out: Candidate[] = [];
  const templates = strings(schema["murmur-destinations"]);
  for (const t of templates) {
    let unresolved = false;
    const path = t.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const v = input[name];
      if (typeof v !== "string") unresolved = true;
      return typeof v === "string" ? v : "";
    });
    if (!unresolved) out.push({ path, signal: `destination ${t}`, subtree: false, cwd: "." });
  }
  walk(input, schema, out);
  return out;
}

function walk(
  obj: Record<string, unknown>,
  schema: Record<string, unknown>,
  out: Candidate[],
): void {
  const props = asSchema(schema.properties);
  const keys = Object.keys(obj);
  const hasContent = keys.some((k) => CONTENT_KEYS.has(fold(k)));
  for (const k of keys) {
    const sub = asSchema(props[k]);
    const v = obj[k];
    if (sub.format === "murmur-opaque") continue;
    const f = fold(k);
    const named = sub.format === "murmur-destination" || DEST_KEYS.has(f) ||
      (PATH_KEYS.has(f) && hasContent);
    if (named) {
      for (const p of strings(v)) {
        out.push({ path: p, signal: `input key ${k}`, subtree: false, cwd: "." });
      }
    }
    if (Array.isArray(v)) {
      const items = asSchema(sub.items);
      for (const item of v) {
        if (item && typeof item === "object" && !Array.isArray(item)) {
          walk(item as Record<string, unknown>, items, out);
        }
      }
    } else if (v && typeof v === "object") walk(v as Record<string, unknown>, sub, out);
  }
}
