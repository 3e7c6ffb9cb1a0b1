/**
 * A key that is a near miss of a key its section declares and does not have (`inferance:` with no
 * `inference:`, `inference.scirpt:` with no `script:`, `capabilities.shell.allw:`), or a key
 * dedented out of the section that declares it (`script:` at the top level, `shell:` under an
 * empty `capabilities:`), is an error, E-MAN-004, not the W-SEC-019 warning other unknown keys
 * get: ignored, it would leave its section at the defaults — a provider config under `inferance:`
 * would run the built-in scripted model and end `ok`, a shell list under `allw:` would leave the
 * capsule without its shell tool. Which keys a place takes is read from the schema (suggest.ts
 * `keysAt`), so a section added to schema.ts is guarded with no list to keep here.
 * docs/manifest.md "A misspelt or misplaced key is an error" says the same for users.
 */
import { MurError } from "../errors.ts";
import { dedentedHome } from "./dedented_keys.ts";
import { distance, keysAt } from "./suggest.ts";

function mapping(v: unknown): Record<string, unknown> | null {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as Record<string, unknown>
    : null;
}

/**
 * Near enough to be a slip: within two edits for a section name (the top level, as before), and
 * at the did-you-mean distance of suggest.ts below it.
 */
function near(owner: readonly PropertyKey[], known: string, d: number): boolean {
  return owner.length === 0 ? d <= 2 : d <= Math.max(1, Math.floor(known.length / 3));
}

/** `tools[1].name` from `["tools", 1, "name"]`. */
function dotted(path: readonly PropertyKey[]): string {
  return path.map((p, i) => typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${String(p)}`)
    .join("");
}

/** The E-MAN-004 errors of `raw`'s unknown keys (none when every near key is there). */
export function misspeltSections(
  raw: unknown,
  unknown: readonly { owner: readonly PropertyKey[]; name: string }[],
  label: string,
): MurError[] {
  const errors: MurError[] = [];
  for (const { owner, name } of unknown) {
    // Through lists too (`tools[1]`): an entry's keys are guarded like a section's.
    const at = mapping(
      owner.reduce<unknown>(
        (v, p) =>
          typeof v === "object" && v !== null
            ? (v as Record<string, unknown>)[String(p)]
            : undefined,
        raw,
      ),
    );
    if (!at) continue;
    const key = name.toLowerCase().replaceAll("-", "_");
    let best: { known: string; d: number } | undefined;
    // The nearest key, present or not: a slip of a key that is there is a warning (below).
    for (const known of keysAt(owner)) {
      const d = distance(key, known);
      const closer = !best || d < best.d || (d === best.d && !(known in at));
      if (near(owner, known, d) && closer) best = { known, d };
    }
    if (best && best.known in at) continue;
    const written = dotted([...owner, name]);
    const what = owner.length ? "key" : "section";
    if (best) {
      const path = dotted([...owner, best.known]);
      errors.push(
        new MurError(
          "E-MAN-004",
          `${label}: '${written}' is not a ${what} mur knows, and '${path}' is missing: did you mean '${path}'? (a misspelt ${what} would be ignored, leaving '${path}' at its default${
            owner.length ? "" : "s"
          })`,
        ),
      );
      continue;
    }
    const home = dedentedHome(raw, owner, name);
    if (home) {
      const paths = home.map((h) => `'${dotted([...h, name])}'`).join(" or ");
      const under = home.map((h) => `'${dotted(h)}:'`).join(" or ");
      errors.push(
        new MurError(
          "E-MAN-004",
          `${label}: '${written}' is not a ${what} mur knows, but ${paths} is: indent it under ${under} (YAML reads a key's section from its indentation; misplaced, it would be ignored, leaving ${paths} at its default)`,
        ),
      );
    }
  }
  return errors;
}
