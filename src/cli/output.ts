/**
 * Unbuffered output for the CLI: each call is written out before it returns, so a pipe
 * (`mur watch | grep …`) sees every line the moment it is made.
 */
const encoder = new TextEncoder();

async function writeAll(w: { write(p: Uint8Array): Promise<number> }, text: string): Promise<void> {
  let bytes = encoder.encode(text);
  while (bytes.length > 0) {
    const n = await w.write(bytes);
    bytes = bytes.subarray(n);
  }
}

export function writeOut(text: string): Promise<void> {
  return writeAll(Deno.stdout, text);
}

export function writeErr(text: string): Promise<void> {
  return writeAll(Deno.stderr, text);
}

/**
 * Whether to colour stdout: `always` and `never` are the user's word; `auto` colours a terminal
 * unless NO_COLOR is set to a non-empty value (https://no-color.org: "present and not an empty
 * string"; a command-line flag overrides it).
 */
export function stdoutColor(when: "auto" | "always" | "never" = "auto"): boolean {
  if (when !== "auto") return when === "always";
  return Deno.stdout.isTerminal() && !Deno.env.get("NO_COLOR");
}

/** The terminal's width, or undefined when stdout is not a terminal. */
export function stdoutWidth(): number | undefined {
  if (!Deno.stdout.isTerminal()) return undefined;
  try {
    return Deno.consoleSize().columns;
  } catch {
    return undefined;
  }
}
