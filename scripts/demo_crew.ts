/**
 * `deno task demo:crew`: a crew on the scripted model (README "Crews"). Launches the formation in
 * `examples/crew` with `mur run --roster` (a lead and two members), follows the lead live with
 * the real `mur watch` — its two `call-member` calls in one turn, the waiting statuses while the
 * members work, the continuation with both answers — and when the formation ends shows the
 * lead's answer and where each member's trace is.
 *
 *   deno task demo:crew ["your task text"]
 *
 * Everything the demo starts is stopped (by pid) before it exits, also on Ctrl-C.
 */
const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const MAIN = `${ROOT}/main.ts`;
const ROSTER = "examples/crew/roster.yaml";
const DEFAULT_TASK = "Why is the sky blue?";

const color = Deno.stdout.isTerminal() && Deno.env.get("NO_COLOR") === undefined;
const bold = (s: string) => color ? `\x1b[1m${s}\x1b[0m` : s;
const dim = (s: string) => color ? `\x1b[2m${s}\x1b[0m` : s;
const enc = new TextEncoder();
/** Written out at once, so the demo's lines and mur watch's interleave in true order. */
function say(text = ""): void {
  Deno.stdout.writeSync(enc.encode(text + "\n"));
}

interface FormationLine {
  formation_id: string;
  entry: string;
  url: string;
  members: { name: string; url: string; pid: number | null; session_id: string | null }[];
}

const children = new Set<Deno.ChildProcess>();

function mur(args: string[], stdout: "piped" | "inherit"): Deno.ChildProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    cwd: ROOT,
    stdin: "null",
    stdout,
    stderr: "inherit",
  }).spawn();
  children.add(child);
  child.status.finally(() => children.delete(child));
  return child;
}

/** SIGTERM (the launcher stops every member on it), then SIGKILL after 15 s. */
async function stopAll(): Promise<void> {
  const left = [...children];
  const signal = (c: Deno.ChildProcess, s: Deno.Signal) => {
    try {
      c.kill(s);
    } catch {
      // gone
    }
  };
  left.forEach((c) => signal(c, "SIGTERM"));
  const timer = setTimeout(() => left.forEach((c) => signal(c, "SIGKILL")), 15_000);
  await Promise.allSettled(left.map((c) => c.status));
  clearTimeout(timer);
}

function within<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms)),
  ]);
}

/** The first stdout line of `child` (its readiness line), bounded by `ms`. */
async function firstLine(child: Deno.ChildProcess, ms: number): Promise<string | null> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const deadline = Date.now() + ms;
  try {
    while (!buf.includes("\n")) {
      const r = await within(reader.read(), Math.max(0, deadline - Date.now()));
      if (r === "timeout" || r.done) return null;
      buf += r.value;
    }
    return buf.slice(0, buf.indexOf("\n"));
  } finally {
    reader.releaseLock();
    child.stdout.cancel().catch(() => {});
  }
}

function traceOf(sessionDir: string): { event_type: string; [k: string]: unknown }[] {
  try {
    return Deno.readTextFileSync(`${sessionDir}/trace.jsonl`).split("\n").filter(Boolean).map((
      l,
    ) => JSON.parse(l));
  } catch {
    return [];
  }
}

async function demo(task: string): Promise<number> {
  say(
    bold("mur crew demo") + " — a lead and two members on the scripted model (no network, no key)",
  );
  say();
  say(`1. ${bold("mur run --roster")} launches the formation ${ROSTER} names, with the task:`);
  say(`     "${task}"`);
  const args = ["run", "--roster", ROSTER, "--task", task, "--json"];
  say(dim(`   $ mur ${args.map((a) => (/[\s"'?]/.test(a) ? JSON.stringify(a) : a)).join(" ")}`));
  const launcher = mur(args, "piped");
  const line = await firstLine(launcher, 60_000);
  if (line === null) {
    say("the formation did not come up; its error is above.");
    return 1;
  }
  const f = JSON.parse(line) as FormationLine;
  say(
    `   Every member is its own mur run; the lead starts last, with the task. One line (--json):`,
  );
  say(dim(`   ${line}`));
  for (const m of f.members) {
    say(
      `     ${m.name.padEnd(8)} ${m.session_id}  ${m.url}${m.name === f.entry ? "  (entry)" : ""}`,
    );
  }
  say(`   The lead may call writer and checker, each with a token for that one edge.`);
  say();
  const lead = f.members.find((m) => m.name === f.entry)!;
  say(`2. ${bold("mur watch")} follows the lead live (its own output below):`);
  say(dim(`   $ mur watch ${lead.session_id}`));
  say(dim("   ─".padEnd(60, "─")));
  const watcher = mur(["watch", lead.session_id!], "inherit");
  const ended = await within(launcher.status, 120_000);
  if (ended === "timeout") {
    say("the formation did not end within 2 minutes; stopping it.");
    return 1;
  }
  if ((await within(watcher.status, 10_000)) === "timeout") watcher.kill("SIGKILL");
  say(dim("   ─".padEnd(60, "─")));
  say(dim(
    "   (the lead exits after its one task, so mur watch reports the connection as lost.)",
  ));
  say();
  say(
    `3. The lead's task ended, so the formation ended: every member stopped (exit ${ended.code}).`,
  );
  const dirs = f.members.map((m) => ({
    ...m,
    dir: `${ROOT}/examples/crew/${m.name}/workdir/${m.session_id}`,
  }));
  const leadDir = dirs.find((d) => d.name === f.entry)!.dir;
  say(
    `   The lead's answer (${
      bold(`examples/crew/${f.entry}/workdir/${lead.session_id}/out/result.txt`)
    }):`,
  );
  const result = await Deno.readTextFile(`${leadDir}/out/result.txt`).catch(() => "(none)");
  for (const l of result.trimEnd().split("\n")) say(`     │ ${l}`);
  say();
  const calls = traceOf(leadDir).filter((l) => l.event_type === "member_call");
  say(`   Its trace holds one member_call line per call:`);
  for (const c of calls) {
    say(`     ${c.call_id}  → ${c.member}  ${c.status}  member task ${c.member_task_id}`);
  }
  say(`   and each member's trace holds the task it was handed, in its peer lane:`);
  for (const d of dirs.filter((d) => d.name !== f.entry)) {
    const start = traceOf(d.dir).find((l) => l.event_type === "task_start");
    say(`     ${d.name.padEnd(8)} ${start?.task_id ?? "?"}  origin ${start?.origin ?? "?"}`);
  }
  say();
  say(`4. Read any of them:`);
  for (const d of dirs) {
    say(`     deno task mur trace show ${d.session_id} --workdir examples/crew/${d.name}/workdir`);
  }
  say();
  say(`   Run it by hand: deno task mur run --roster ${ROSTER} --task "${task}"`);
  say(`   (mur ps shows the formation while it runs; mur stop <frm id> stops it as one.)`);
  return ended.code;
}

if (import.meta.main) {
  const task = Deno.args.join(" ") || DEFAULT_TASK;
  const interrupted = async () => {
    await stopAll();
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", interrupted);
  Deno.addSignalListener("SIGTERM", interrupted);
  let code = 1;
  try {
    code = await demo(task);
  } finally {
    await stopAll();
  }
  Deno.exit(code);
}
