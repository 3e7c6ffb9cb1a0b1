/**
 * A key within two edits of a section the manifest does not have (`inferance:` with no
 * `inference:`, `lifecycel:` with no `lifecycle:`), or of `inference.driver` when there is no
 * driver (`drivr: anthropic`), is an error, E-MAN-004, not the W-SEC-019 warning other unknown
 * keys get: ignored, it would leave its section at the defaults — a provider config under
 * `inferance:` would run the built-in scripted model and end `ok`. docs/manifest.md "A misspelt
 * section is an error" says the same for users.
 */
import { MurError } from "../errors.ts";
import { distance, keysAt } from "./suggest.ts";

/** Where a slip is an error: the owner's path, and which of its keys a slip can stand for. */
const GUARDED: { owner: string[]; keys: () => string[] }[] = [
  { owner: [], keys: () => keysAt([]) },
  { owner: ["inference"], keys: () => ["driver"] },
];

function mapping(v: unknown): Record<string, unknown> | null {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as Record<string, unknown>
    : null;
}

/** The E-MAN-004 errors of `raw`'s unknown keys (none when every near key is there). */
export function misspeltSections(
  raw: unknown,
  unknown: readonly { owner: readonly PropertyKey[]; name: string }[],
  label: string,
): MurError[] {
  const errors: MurError[] = [];
  for (const { owner, name } of unknown) {
    const place = GUARDED.find((g) =>
      g.owner.length === owner.length && g.owner.every((p, i) => p === owner[i])
    );
    const at = place && owner.reduce<Record<string, unknown> | null>(
      (m, p) => mapping(m?.[String(p)]),
      mapping(raw),
    );
    if (!place || !at) continue;
    const key = name.toLowerCase().replaceAll("-", "_");
    let best: { known: string; d: number } | undefined;
    for (const known of place.keys()) {
      if (known in at) continue;
      const d = distance(key, known);
      if (d <= 2 && (!best || d < best.d)) best = { known, d };
    }
    if (!best) continue;
    const path = [...owner, best.known].join(".");
    const written = [...owner, name].join(".");
    errors.push(
      new MurError(
        "E-MAN-004",
        `${label}: '${written}' is not a ${
          owner.length ? "key" : "section"
        } mur knows, and '${path}' is missing: did you mean '${path}'? (a misspelt ${
          owner.length ? "key" : "section"
        } would be ignored, leaving '${path}' at its default${owner.length ? "" : "s"})`,
      ),
    );
  }
  return errors;
}
