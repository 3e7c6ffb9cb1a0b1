/**
 * Ctrl-C in a terminal echoes `^C` where the cursor is, and what a process prints next would
 * follow it on that line (`^Cstatus: ok`). After a SIGINT with a terminal on stdout, a newline
 * first puts what follows at the start of a line of its own: `mur run`'s signal note and status
 * line (src/cli/signal_note.ts), a formation launcher's (src/crew/formation/launch.ts).
 */
export function newLineAfterInterrupt(signal: "SIGINT" | "SIGTERM"): void {
  if (signal !== "SIGINT" || !Deno.stdout.isTerminal()) return;
  try {
    Deno.stdout.writeSync(new TextEncoder().encode("\n"));
  } catch {
    // a closed terminal: nothing to line up
  }
}
