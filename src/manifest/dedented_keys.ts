/**
 * Where a key written at the wrong depth belongs: an unknown key at `owner` that a section below
 * `owner` declares (`script:` at the top level is `inference.script`; `allow:` under
 * `capabilities:` is `capabilities.shell.allow` or `capabilities.spawn.allow`) was most likely
 * dedented out of that section. Read from the schema (suggest.ts `keysAt`), so new sections count
 * with no list kept here. misspelt_sections.ts turns an answer into E-MAN-004.
 */
import { keysAt } from "./suggest.ts";

/** How deep below `owner` to look: sections nest at most three levels under the top. */
const MAX_DEPTH = 3;

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur = root;
  for (const p of path) {
    if (typeof cur !== "object" || cur === null || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[String(p)];
  }
  return cur;
}

/** Sections (mappings, not lists) below `owner` in the schema, nearest first. */
function sectionsBelow(owner: readonly PropertyKey[]): PropertyKey[][] {
  const out: PropertyKey[][] = [];
  let level: PropertyKey[][] = [[...owner]];
  for (let depth = 0; depth < MAX_DEPTH && level.length > 0; depth++) {
    const next: PropertyKey[][] = [];
    for (const path of level) {
      for (const key of keysAt(path)) {
        const child = [...path, key];
        if (keysAt(child).length > 0) next.push(child);
      }
    }
    out.push(...next);
    level = next;
  }
  return out;
}

/**
 * The sections below `owner` that declare `name`, when at least one of them does not have it set
 * in `raw` (so the key, ignored, would leave it at its default); otherwise undefined.
 */
export function dedentedHome(
  raw: unknown,
  owner: readonly PropertyKey[],
  name: string,
): PropertyKey[][] | undefined {
  const homes = sectionsBelow(owner).filter((s) => keysAt(s).includes(name));
  if (homes.length === 0) return undefined;
  const unset = homes.some((h) => valueAt(raw, [...h, name]) === undefined);
  return unset ? homes : undefined;
}
