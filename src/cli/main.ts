/** `mur <command> …`: dispatches to one file per command; one rule for errors and exit statuses. */
import { usageText } from "../invocation.ts";
import { MurError } from "../errors.ts";
import { versionLine } from "../version.ts";
import { lazyImport } from "../lazy.ts";
import { USAGE_EXIT, UsageError } from "./args.ts";
import { nearest } from "../edit_distance.ts";

const USAGE = `usage: mur <command> [options]
       mur --version

mur runs an agent capsule (one agent session behind an A2A door), streams what it does, and lets
you follow, steer and stop it.

commands:
  run      start a capsule session (mur run --manifest DIR --task TEXT)
  watch    follow a running session's event stream
  stop     end a running session
  cancel   cancel one task of a running session
  approve  approve the tool call a task waits on
  deny     deny the tool call a task waits on (--reason)
  send     send a running session a task, or a follow-up in a conversation (--context)
  answer   answer a task that waits for input ([input-required])
  attach   follow a session and steer it from this terminal: answer, follow up, cancel
  ps       list running sessions
  trace    read a finished or running session's trace.jsonl (show | steps)
  edge     serve the streams of every session published to one Redis (cluster:)
  version  print mur's version and the commit it was built from

mur <command> --help describes every flag of a command.
Exit status: 0 done; 1 an error, reported as error[E-…] on stderr; 2 a usage error (E-CLI-…).`;

type Command = (args: string[]) => Promise<number>;

/** Each command's module, loaded when that command runs (src/lazy.ts says why not `import()`). */
const commands: Record<string, () => Promise<Command>> = {
  run: async () => (await lazyImport<typeof import("./run.ts")>("cli/run.ts")).runCommand,
  watch: async () => (await lazyImport<typeof import("./watch.ts")>("cli/watch.ts")).watchCommand,
  stop: async () => (await lazyImport<typeof import("./stop.ts")>("cli/stop.ts")).stopCommand,
  cancel: async () =>
    (await lazyImport<typeof import("./cancel.ts")>("cli/cancel.ts")).cancelCommand,
  ps: async () => (await lazyImport<typeof import("./ps.ts")>("cli/ps.ts")).psCommand,
  approve: async () =>
    (await lazyImport<typeof import("./approve.ts")>("cli/approve.ts")).approveCommand,
  deny: async () => (await lazyImport<typeof import("./deny.ts")>("cli/deny.ts")).denyCommand,
  send: async () => (await lazyImport<typeof import("./send.ts")>("cli/send.ts")).sendCommand,
  answer: async () =>
    (await lazyImport<typeof import("./answer.ts")>("cli/answer.ts")).answerCommand,
  attach: async () =>
    (await lazyImport<typeof import("./attach.ts")>("cli/attach.ts")).attachCommand,
  trace: async () => (await lazyImport<typeof import("./trace.ts")>("cli/trace.ts")).traceCommand,
  edge: async () => (await lazyImport<typeof import("./edge.ts")>("cli/edge.ts")).edgeCommand,
  version: () => Promise.resolve(version),
};

/** `mur: unknown command 'wacth'; did you mean 'watch'?`, over every command in the table. */
function unknownCommand(name: string): string {
  const near = nearest(name.toLowerCase(), Object.keys(commands));
  return `mur: unknown command '${name}'${near ? `; did you mean '${near}'?` : ""}`;
}

function version(args: string[]): Promise<number> {
  if (args.length > 0) {
    throw new UsageError("E-CLI-002", "mur version: takes no arguments", "usage: mur version");
  }
  console.log(versionLine());
  return Promise.resolve(0);
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === "-h" || name === "--help" || name === "help") {
      console.log(usageText(USAGE));
      return 0;
    }
    if (name === "--version") return await version(rest);
    if (name === undefined) throw new UsageError("E-CLI-002", "mur: give a command", USAGE);
    const load = commands[name];
    if (!load) {
      throw name.startsWith("-")
        ? new UsageError("E-CLI-002", `mur: unknown flag ${name}`, USAGE)
        : new UsageError("E-CLI-001", unknownCommand(name), USAGE);
    }
    ignoreFileSizeSignal();
    return await (await load())(rest);
  } catch (e) {
    if (e instanceof MurError) {
      console.error(e.format());
      return e instanceof UsageError ? USAGE_EXIT : 1;
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
