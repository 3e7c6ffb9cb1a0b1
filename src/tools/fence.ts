/**
 * The untrusted fence (docs/tools.md): text that came from outside the capsule's trust (tool
 * output, untrusted task payloads, member answers) is wrapped so the model can tell data from
 * instructions, and any marker inside the data is defused so the block cannot be closed early.
 *
 *   <untrusted-content source=NAME>\n<content>\n</untrusted-content>
 */

export const FENCE_OPEN_PREFIX = "<untrusted-content source=";
export const FENCE_CLOSE = "</untrusted-content>";
export const NEUTRALISER = "!MURMUR-NEUTRALISED!";

/**
 * `<` followed by an optional `/` and `untrusted-content`, ASCII case-insensitive. The lookahead
 * keeps the match to the `<` alone, so the replacement inserts and never rewrites: casing is
 * preserved, and an already neutralised marker (`<!MURMUR-NEUTRALISED!/…`) no longer matches,
 * which makes the operation idempotent.
 */
const MARKER = /<(?=\/?untrusted-content)/gi;

/** Defuses every fence marker inside `content`; content without markers comes back unchanged. */
export function neutralise(content: string): string {
  return content.replace(MARKER, `<${NEUTRALISER}`);
}

/**
 * The fence's NAME: markers neutralised, `>` → `_`, CR and LF → space (one line, one token end).
 */
export function sanitiseSource(source: string): string {
  return neutralise(source).replace(/>/g, "_").replace(/[\r\n]/g, " ");
}

/** Wraps `content` in the fence under `source` (e.g. `tool:bash`). */
export function fence(source: string, content: string): string {
  return `${FENCE_OPEN_PREFIX}${sanitiseSource(source)}>\n${neutralise(content)}\n${FENCE_CLOSE}`;
}
