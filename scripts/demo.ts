/**
 * `deno task demo`: a newcomer's first look at mur. Starts the `examples/hello` capsule (scripted
 * model: it thinks, talks, runs one shell command and answers), follows it live with the real
 * `mur watch`, and when the capsule ends shows where everything went: the session's workdir,
 * `out/result.txt`, `trace.jsonl`, and the commands that read them.
 *
 *   deno task demo ["your task text"] [--manifest DIR] [--workdir DIR]
 *
 * Everything the demo starts is killed (by pid) before it exits, also on Ctrl-C.
 */
import { parseArgs } from "node:util";
import { murLine, murPath } from "../src/invocation.ts";
import { bold, dim, firstLine, kill, mur, ROOT, say, stopAll, within } from "./demo_kit.ts";

const EXAMPLE = `${ROOT}/examples/hello`;
const DEFAULT_TASK = "Say hello and show me where we are.";

/** A path as the user would type it from the repository root. */
function shown(path: string): string {
  return path.startsWith(ROOT + "/") ? path.slice(ROOT.length + 1) : path;
}

interface Ready {
  url: string;
  pid: number;
  session_id: string;
  name: string;
  version: string;
  workdir: string;
  /** The session's own folder (trace, result, logs): the workdir, or `<workdir>/.murmur/<id>`. */
  session_dir?: string;
}

async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(dir)) entries.push(e);
  entries.sort((a, b) => a.name.localeCompare(b.name));
  const out: string[] = [];
  for (const e of entries) {
    if (e.isDirectory) {
      out.push(`${prefix}${e.name}/`);
      out.push(...await listFiles(`${dir}/${e.name}`, `${prefix}${e.name}/`));
    } else {
      const size = (await Deno.stat(`${dir}/${e.name}`)).size;
      out.push(`${prefix}${e.name}  ${dim(`(${size} bytes)`)}`);
    }
  }
  return out;
}

async function demo(
  task: string,
  manifest: string,
  workdir: string | undefined,
): Promise<number> {
  say(bold("mur demo") + " — one capsule, one task, on a scripted model (no network, no key)");
  say();
  say(`1. ${bold("mur run")} starts the capsule in ${shown(manifest)}/ with the task:`);
  say(`     "${task}"`);
  // Relative to the repository root, the children's cwd, so the command shown is one to copy.
  const runArgs = ["run", "--manifest", shown(manifest), "--task", task, "--json"];
  if (workdir) runArgs.push("--workdir", workdir);
  say(dim(`   $ ${murLine(...runArgs)}`));
  const capsule = mur(runArgs, "piped");
  const line = await firstLine(capsule, 30_000);
  if (line === null) {
    const st = await within(capsule.status, 5000);
    say(`mur run did not start (${st === "timeout" ? "no readiness line" : `exit ${st.code}`});`);
    say("its error is above.");
    return 1;
  }
  const ready = JSON.parse(line) as Ready;
  say(`   It printed one readiness line (--json) once its door was listening:`);
  say(dim(`   ${line}`));
  say(`   session ${bold(ready.session_id)}, door at ${ready.url}, process ${ready.pid}`);
  say(`   The same door serves a live page of the session: ${bold(`http://${ready.url}/ui`)}`);
  say();

  say(`2. ${bold("mur watch")} follows the session's event stream live (its own output below):`);
  say(dim(`   $ ${murLine("watch", "--url", ready.url)}`));
  say(dim("   ─".padEnd(60, "─")));
  const watcher = mur(["watch", "--url", ready.url], "inherit");

  const capsuleStatus = await within(capsule.status, 120_000);
  if (capsuleStatus === "timeout") {
    say("the capsule did not end within 2 minutes; stopping it.");
    return 1;
  }
  // The capsule closed its door; watch sees the connection end and exits by itself.
  const watchStatus = await within(watcher.status, 10_000);
  if (watchStatus === "timeout") kill(watcher, "SIGKILL");
  say(dim("   ─".padEnd(60, "─")));
  say(dim(
    "   (the capsule exits after its one task, so mur watch reports the connection as lost:\n" +
      "    that is how a watcher learns the capsule is gone. Thinking and tool-call progress\n" +
      "    frames are in the stream too; mur watch --json shows every event as it arrives.)",
  ));
  say();

  const wd = ready.workdir;
  const sd = ready.session_dir ?? wd;
  const traceLines = (await Deno.readTextFile(`${sd}/trace.jsonl`)).split("\n").filter(Boolean)
    .map((l) => JSON.parse(l) as { event_type: string; exit_status?: string });
  const end = traceLines.find((l) => l.event_type === "session_end");
  const status = end?.exit_status ?? "unknown";
  say(`3. The capsule ended: status ${bold(status)}, exit code ${capsuleStatus.code}.`);
  say(`   Everything it wrote is in its workdir, ${bold(shown(wd) + "/")}:`);
  for (const f of await listFiles(wd)) say(`     ${f}`);
  say();
  say(`   ${bold(sd === wd ? "out/result.txt" : `${shown(sd)}/out/result.txt`)} — the answer:`);
  const result = await Deno.readTextFile(`${sd}/out/result.txt`);
  for (const l of result.trimEnd().split("\n")) say(`     │ ${l}`);
  say();
  const counts = new Map<string, number>();
  for (const l of traceLines) counts.set(l.event_type, (counts.get(l.event_type) ?? 0) + 1);
  say(
    `   ${
      bold(sd === wd ? "trace.jsonl" : `${shown(sd)}/trace.jsonl`)
    } — ${traceLines.length} lines, one per runtime event: ${
      [...counts].map(([k, n]) => n > 1 ? `${k} ×${n}` : k).join(", ")
    }`,
  );
  say(
    `   ${bold("task.md")} is your task; ${
      bold("MURMUR.md")
    } is what the model was told about its capsule.`,
  );
  say();
  // `--workdir` for mur trace: the folder holding the session folders (the workdir's parent in
  // the default layout; the workdir itself when its sessions are under its .murmur/).
  // Every command line below runs as printed where the user typed the demo's command
  // (src/invocation.ts: `npx -y deno@2 task mur` without a deno on PATH, `mur` under a shim).
  const wdParent = murPath(sd === wd ? wd.slice(0, wd.lastIndexOf("/")) : wd);
  const trace = (sub: string) => murLine("trace", sub, ready.session_id, "--workdir", wdParent);
  say(`4. Read the trace:`);
  say(`     ${trace("show")}   # summary`);
  say(`     ${trace("steps")}  # session → task → turn tree`);
  say();
  say(`   Run it yourself in two terminals (README "A first capsule of your own"):`);
  say(
    `     ${
      murLine(
        "run",
        "--manifest",
        murPath(EXAMPLE),
        "--task",
        "Say hello",
        "-v",
        "--lifecycle-task-acceptance",
        "queue",
        "--lifecycle-after-task",
        "sleep",
      )
    }`,
  );
  say(`     ${murLine("watch")}      # in the second terminal`);
  say(`     ${murLine("stop", "@1")}    # ends the capsule`);
  say(
    `   or follow it in a browser: open the ${
      bold("page:")
    } address that mur run -v prints (the live page).`,
  );
  return capsuleStatus.code;
}

/** The children run from the repository root, so paths given relative to the caller's cwd are made absolute. */
function absolute(path: string): string {
  return path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { manifest: { type: "string" }, workdir: { type: "string" } },
    allowPositionals: true,
  });
  const task = positionals.join(" ") || DEFAULT_TASK;
  const interrupted = async () => {
    await stopAll(5000);
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", interrupted);
  Deno.addSignalListener("SIGTERM", interrupted);
  let code = 1;
  try {
    const manifest = values.manifest ? await Deno.realPath(values.manifest) : EXAMPLE;
    code = await demo(task, manifest, values.workdir && absolute(values.workdir));
  } finally {
    await stopAll(5000);
  }
  Deno.exit(code);
}
