/**
 * "Did you mean …" for a manifest key mur does not know: the keys the schema takes at the same
 * place (`inferance` → `inference`, `lifecycle.after_tasks` → `after_task`), nearest first.
 */
import { z } from "zod";
import { manifestSchema } from "./schema.ts";

import { distance } from "../edit_distance.ts";

export { distance };

/** The schema one level down: optional, lazy, pipes and arrays unwrapped; an object's field by name. */
function child(schema: z.ZodType, part: PropertyKey): z.ZodType | undefined {
  let s: z.ZodType | undefined = inner(schema);
  if (typeof part === "number") {
    s = s instanceof z.ZodArray ? inner(s.element as z.ZodType) : undefined;
  } else if (s instanceof z.ZodObject) {
    s = (s.shape as Record<string, z.ZodType>)[String(part)];
  } else if (s instanceof z.ZodRecord) {
    s = s.valueType as z.ZodType;
  } else s = undefined;
  return s && inner(s);
}

function inner(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let i = 0; i < 8; i++) {
    if (s instanceof z.ZodOptional) s = s.unwrap() as z.ZodType;
    else if (s instanceof z.ZodLazy) s = s.unwrap() as z.ZodType; // a section (schema.ts)
    else if (s instanceof z.ZodPipe) s = s.out as z.ZodType;
    else break;
  }
  return s;
}

/** The keys the manifest takes at `owner` (a zod issue path), or none when it is not a mapping. */
export function keysAt(owner: readonly PropertyKey[]): string[] {
  let s: z.ZodType | undefined = manifestSchema;
  for (const part of owner) {
    s = s && child(s, part);
    if (!s) return [];
  }
  s = inner(s);
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

/** The known key nearest to `key` at `owner`, when one is near enough to be a slip. */
export function suggestKey(owner: readonly PropertyKey[], key: string): string | undefined {
  const lower = key.toLowerCase().replaceAll("-", "_");
  let best: { key: string; d: number } | undefined;
  for (const known of keysAt(owner)) {
    const d = distance(lower, known);
    const near = d <= Math.max(1, Math.floor(known.length / 3));
    if (near && (!best || d < best.d)) best = { key: known, d };
  }
  return best?.key;
}
