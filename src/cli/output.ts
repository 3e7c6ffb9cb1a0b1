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

/** Colour only on a terminal, and never when NO_COLOR is set (to anything). */
export function stdoutColor(): boolean {
  return Deno.stdout.isTerminal() && Deno.env.get("NO_COLOR") === undefined;
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
