/**
 * `${NAME}` in a manifest's string values, from mur's environment (docs/manifest.md): `$${` is a
 * literal `${`; an unset NAME, or a `${…}` that is not a plain name, is E-MAN-003 naming the key
 * path, and every one of them is named at once.
 */
import { MurError } from "../errors.ts";
import { invalid, keyPath } from "./schema.ts";

export type Env = Record<string, string | undefined>;

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
