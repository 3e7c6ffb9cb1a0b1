/** `mur <command> …`: dispatches to one file per command. */
import { MurError } from "../errors.ts";

const USAGE = `usage: mur <command> [options]

commands:
  run      start a capsule session (mur run --manifest DIR --task TEXT)
  watch    follow a running session's event stream
  stop     end a running session
  cancel   cancel one task of a running session
  ps       list running sessions
  trace    read a session's trace.jsonl (show | steps)
`;

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  run: async () => (await import("./run.ts")).runCommand,
  watch: async () => (await import("./watch.ts")).watchCommand,
  stop: async () => (await import("./stop.ts")).stopCommand,
  cancel: async () => (await import("./cancel.ts")).cancelCommand,
  ps: async () => (await import("./ps.ts")).psCommand,
  trace: async () => (await import("./trace.ts")).traceCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "-h" || name === "--help" || name === "help") {
    console.log(USAGE);
    return name ? 0 : 2;
  }
  const load = commands[name];
  if (!load) {
    console.error(`error[E-IO-003]: unknown command '${name}'\n\n${USAGE}`);
    return 2;
  }
  ignoreFileSizeSignal();
  try {
    return await (await load())(rest);
  } catch (e) {
    if (e instanceof MurError) {
      console.error(e.format());
      return 1;
    }
    throw e;
  }
}

/**
 * A file-size limit (RLIMIT_FSIZE, e.g. `ulimit -f` or a quota set that way) sends SIGXFSZ on the
 * write that crosses it, and its default action kills the process mid-line. With a listener the
 * write fails with EFBIG instead, so the writer that owns the file handles it: the session trace
 * reports E-RUN-007 and the session ends cleanly (status failed, running record removed).
 */
function ignoreFileSizeSignal(): void {
  try {
    Deno.addSignalListener("SIGXFSZ", () => {});
  } catch {
    // a platform without SIGXFSZ (Windows) has no such limit to ignore
  }
}
