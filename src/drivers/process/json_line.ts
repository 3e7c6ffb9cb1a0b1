/**
 * One stdout line of a harness that speaks JSON lines (`{"type": …, …}`), read or reported:
 * an unreadable line becomes a `note` for the trace, never an exception.
 */
import { z } from "zod";
import type { HarnessEvent } from "./types.ts";

const Line = z.looseObject({ type: z.string() });

export function parseJsonLine(
  line: string,
  dispatch: (type: string, json: unknown, line: string) => HarnessEvent[],
): HarnessEvent[] {
  if (!line.trim()) return [];
  const unreadable = (): HarnessEvent[] => [
    { kind: "note", text: `unreadable stdout line: ${line.slice(0, 512)}` },
  ];
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return unreadable();
  }
  const head = Line.safeParse(json);
  if (!head.success) return unreadable();
  try {
    return dispatch(head.data.type, json, line);
  } catch {
    return unreadable();
  }
}
