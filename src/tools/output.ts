/**
 * What a tool's output looks like to the model: decoded text, cut at 16 KiB per stream
 * (docs/running.md "Files": larger output is kept whole in `logs/shell-<timestamp>.log` and the result
 * names that file), so one chatty command cannot flood the conversation.
 */

/** Per-stream limit of the text a result carries. */
export const TRUNCATE_BYTES = 16 * 1024;

const decoder = new TextDecoder();

export function decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** The first `limit` bytes of `bytes`, cut back to a UTF-8 character boundary, as text. */
export function headUtf8(bytes: Uint8Array, limit: number): string {
  if (bytes.length <= limit) return decode(bytes);
  let end = limit;
  // Continuation bytes are 10xxxxxx; step back to the start of the character that was cut.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return decode(bytes.subarray(0, end));
}

/** `s` ending in exactly one newline more than it had, unless it is empty or already ends so. */
export function withNewline(s: string): string {
  return s === "" || s.endsWith("\n") ? s : `${s}\n`;
}

/** `20250102T030405.678Z`: a file-name-safe UTC timestamp with milliseconds. */
export function fileStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, "");
}

/**
 * Creates `<workdir>/logs/<prefix>-<timestamp>.log` (a `-2`, `-3` … suffix when two calls share
 * a millisecond) holding `text`. Returns the workdir-relative path.
 */
export async function writeOutputLog(
  workdir: string,
  prefix: string,
  nowMs: number,
  text: string,
): Promise<string> {
  await Deno.mkdir(`${workdir}/logs`, { recursive: true });
  const base = `logs/${prefix}-${fileStamp(nowMs)}`;
  for (let n = 1;; n++) {
    const rel = n === 1 ? `${base}.log` : `${base}-${n}.log`;
    try {
      await Deno.writeTextFile(`${workdir}/${rel}`, text, { createNew: true });
      return rel;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists) || n > 1000) throw e;
    }
  }
}
