/**
 * `deno task demo:crew`: a crew on the scripted model (docs/crews.md). Launches the formation in
 * `examples/crew` with `mur run --roster` (a lead and two members), follows the lead live with
 * the real `mur watch` — its two `call-member` calls in one turn, the waiting statuses while the
 * members work, the continuation with both answers — and when the formation ends shows the
 * lead's answer and where each member's trace is.
 *
 *   deno task demo:crew ["your task text"]
 *
 * Everything the demo starts is stopped (by pid) before it exits, also on Ctrl-C.
 */
import { murLine, murPath } from "../src/invocation.ts";
import { bold, dim, firstLine, mur, ROOT, say, stopAll, within } from "./demo_kit.ts";

const ROSTER = "examples/crew/roster.yaml";
const DEFAULT_TASK = "Why is the sky blue?";

interface FormationLine {
  formation_id: string;
  entry: string;
  url: string;
  members: { name: string; url: string; pid: number | null; session_id: string | null }[];
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
  say(dim(`   $ ${murLine(...args)}`));
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
  say(dim(`   $ ${murLine("watch", lead.session_id!)}`));
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
  // Each line runs as printed where the user typed the demo's command (src/invocation.ts).
  for (const d of dirs) {
    const workdir = murPath(`${ROOT}/examples/crew/${d.name}/workdir`);
    say(`     ${murLine("trace", "show", d.session_id ?? "@1", "--workdir", workdir)}`);
  }
  say();
  say(
    `   Run it by hand: ${
      murLine("run", "--roster", murPath(`${ROOT}/${ROSTER}`), "--task", task)
    }`,
  );
  say(
    `   (\`${murLine("ps")}\` shows the formation while it runs; \`${
      murLine("stop")
    } <frm id>\` stops it as one.)`,
  );
  return ended.code;
}

if (import.meta.main) {
  const task = Deno.args.join(" ") || DEFAULT_TASK;
  const interrupted = async () => {
    await stopAll(15_000);
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", interrupted);
  Deno.addSignalListener("SIGTERM", interrupted);
  let code = 1;
  try {
    code = await demo(task);
  } finally {
    await stopAll(15_000);
  }
  Deno.exit(code);
}
