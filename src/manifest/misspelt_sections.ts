/**
 * A top-level key within two edits of a section the manifest does not have (`inferance:` with no
 * `inference:`, `lifecycel:` with no `lifecycle:`) is an error, E-MAN-004, not the W-SEC-019
 * warning other unknown keys get: ignored, it would leave its section at the defaults — a
 * provider config under `inferance:` would run the built-in scripted model and end `ok`.
 * docs/manifest.md "Unknown keys" says the same for users.
 */
import { MurError } from "../errors.ts";
import { distance, keysAt } from "./suggest.ts";

/** The E-MAN-004 errors of `raw`'s unknown top-level keys (none when every near section is there). */
export function misspeltSections(
  raw: unknown,
  unknown: readonly { owner: readonly PropertyKey[]; name: string }[],
  label: string,
): MurError[] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
  const present = new Set(Object.keys(raw));
  const sections = keysAt([]);
  const errors: MurError[] = [];
  for (const { owner, name } of unknown) {
    if (owner.length > 0) continue;
    const key = name.toLowerCase().replaceAll("-", "_");
    let best: { section: string; d: number } | undefined;
    for (const section of sections) {
      if (present.has(section)) continue;
      const d = distance(key, section);
      if (d <= 2 && (!best || d < best.d)) best = { section, d };
    }
    if (best) {
      errors.push(
        new MurError(
          "E-MAN-004",
          `${label}: '${name}' is not a section mur knows, and '${best.section}' is missing: did you mean '${best.section}'? (a misspelt section would be ignored, leaving '${best.section}' at its defaults)`,
        ),
      );
    }
  }
  return errors;
}
