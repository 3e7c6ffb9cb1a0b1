/**
 * The CLI's own surface, run as a user runs it: `mur --version` / `mur version` (version and
 * commit), `mur <command> --help` describing every flag the command parses, one usage-error rule
 * (E-CLI-00N, exit 2) for every command, and distinct codes for an unknown command, a bad flag
 * value, an unknown task and a lost connection; `mur cancel` of an ended task against a real
 * capsule exits 1 with the door's refusal.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import denoJson from "../../deno.json" with { type: "json" };
import * as cancel from "../../src/cli/cancel.ts";
import * as approve from "../../src/cli/approve.ts";
import * as deny from "../../src/cli/deny.ts";
import * as ps from "../../src/cli/ps.ts";
import * as run from "../../src/cli/run.ts";
import * as stop from "../../src/cli/stop.ts";
import * as trace from "../../src/cli/trace.ts";
import * as watch from "../../src/cli/watch.ts";
import * as send from "../../src/cli/send.ts";
import * as answer from "../../src/cli/answer.ts";
import * as attach from "../../src/cli/attach.ts";
import { murCommit } from "../../src/version.ts";
import { startCapsule } from "../helpers/capsule.ts";
import { until } from "../helpers/until.ts";
import { runMur, tempHome } from "./helpers.ts";
import { usageText } from "../../src/invocation.ts";

function gitHead(): string {
  const out = new Deno.Command("git", {
    args: ["-C", new URL("../..", import.meta.url).pathname, "rev-parse", "--short=12", "HEAD"],
    stdout: "piped",
  }).outputSync();
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("mur --version and mur version print the version from deno.json and the commit", async () => {
  const want = `mur ${denoJson.version} (commit ${gitHead()})\n`;
  for (const args of [["--version"], ["version"]]) {
    const r = await runMur(args);
    assertEquals([r.code, r.stdout, r.stderr], [0, want, ""]);
  }
});

Deno.test("the commit: a build's build_info.json first, else git, else unknown", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-version-" });
  try {
    await Deno.writeTextFile(`${dir}/build_info.json`, JSON.stringify({ commit: "feedc0ffee12" }));
    assertEquals(murCommit(`${dir}/build_info.json`, dir), "feedc0ffee12");
    // No build info: git of the folder, and a folder outside any repository has none.
    assertEquals(
      murCommit(`${dir}/absent.json`, new URL(".", import.meta.url).pathname),
      gitHead(),
    );
    assertEquals(murCommit(`${dir}/absent.json`, dir), "unknown");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const COMMANDS: [
  string,
  { USAGE: string; FLAGS: Record<string, { type: string; short?: string }> },
][] = [
  ["run", run],
  ["watch", watch],
  ["stop", stop],
  ["cancel", cancel],
  ["approve", approve],
  ["deny", deny],
  ["ps", ps],
  ["trace", trace],
  ["send", send],
  ["answer", answer],
  ["attach", attach],
];

Deno.test("mur <command> --help describes every flag the command takes", async () => {
  for (const [name, mod] of COMMANDS) {
    const r = await runMur([name, "--help"]);
    assertEquals(r.code, 0, `${name}: ${r.stderr}`);
    // The usage, its synopses starting with the command line that runs mur here.
    assertEquals(r.stdout, usageText(mod.USAGE) + "\n");
    const lines = r.stdout.split("\n");
    // A flag is described on a line of its own: indented, the flag, then words (or words on the
    // next line, for a long flag).
    for (const [flag, o] of Object.entries(mod.FLAGS)) {
      if (name === "stop" && flag === "url") continue; // parsed only to refuse it, by name
      const at = lines.findIndex((l) =>
        new RegExp(`^  (-${o.short ?? "_"}, )?--${flag}\\b`).test(l)
      );
      assert(at >= 0, `mur ${name} --help does not describe --${flag}:\n${r.stdout}`);
      const described = /\S+\s{2,}\S/.test(lines[at].trim().replace(/^-\w, /, "")) ||
        /^\s{8,}\S/.test(lines[at + 1] ?? "");
      assert(described, `mur ${name} --help lists --${flag} without saying what it does`);
    }
  }
  const top = await runMur(["--help"]);
  assertEquals(top.code, 0);
  for (const [name] of COMMANDS) assert(top.stdout.includes(`\n  ${name} `), top.stdout);
  assert(top.stdout.includes("\n  version "), top.stdout);
});

Deno.test("one usage-error rule: error[E-CLI-00N]: mur <command>: …, the usage, exit 2", async () => {
  const cases: [string[], string, string][] = [
    [[], "E-CLI-002", "mur: give a command"],
    [["frobnicate"], "E-CLI-001", "mur: unknown command 'frobnicate'\n"],
    [["wacth"], "E-CLI-001", "mur: unknown command 'wacth'; did you mean 'watch'?\n"],
    [["--frob"], "E-CLI-002", "mur: unknown flag --frob"],
    [["run", "--nope"], "E-CLI-002", "mur run: unknown flag --nope"],
    [["run", "--port"], "E-CLI-002", "mur run: --port needs a value"],
    [["run", "--port", "http"], "E-CLI-003", "mur run: --port 'http' is not a port number"],
    [["run", "--lifecycle-after-task", "never"], "E-CLI-003", "mur run: --lifecycle-after-task"],
    [["run", "hello"], "E-CLI-002", "mur run: unexpected argument 'hello'"],
    [["watch", "@1", "@2"], "E-CLI-002", "mur watch: give one SESSION at most"],
    [["watch", "--bogus"], "E-CLI-002", "mur watch: unknown flag --bogus"],
    [["stop"], "E-CLI-002", "mur stop: give one SESSION"],
    [["stop", "@1", "--timeout", "soon"], "E-CLI-003", "mur stop: --timeout 'soon' is not"],
    [["cancel", "@1"], "E-CLI-002", "mur cancel: give a SESSION and a TASK"],
    [["cancel", "@1", "tsk_nope"], "E-CLI-003", "mur cancel: TASK 'tsk_nope' is not"],
    [["ps", "extra"], "E-CLI-002", "mur ps: takes no arguments"],
    [["trace", "diff"], "E-CLI-001", "mur trace: unknown command 'diff'"],
    [["trace"], "E-CLI-002", "mur trace: give show or steps"],
    [["version", "x"], "E-CLI-002", "mur version: takes no arguments"],
    [["send", "a", "b"], "E-CLI-002", "mur send: give the task's text as one argument"],
    [
      ["send", "--url", "x:1", "--session", "@1", "hi"],
      "E-CLI-002",
      "mur send: give --session or --url, not both",
    ],
    [["answer", "a1b2c3"], "E-CLI-002", "mur answer: give a TASK and the TEXT"],
    [["answer", "a1b2c3", " "], "E-CLI-002", "mur answer: the answer's TEXT is empty"],
    [
      ["answer", "--url", "x:1", "tsk_nope", "main"],
      "E-CLI-003",
      "mur answer: TASK 'tsk_nope' is not",
    ],
    [["attach", "@1"], "E-CLI-002", "mur attach: takes no arguments"],
  ];
  const home = await tempHome();
  try {
    for (const [args, code, message] of cases) {
      const r = await runMur(args, { MURMUR_HOME: home });
      assertEquals(r.code, 2, `mur ${args.join(" ")}: exit ${r.code}\n${r.stderr}`);
      assertEquals(r.stdout, "", `mur ${args.join(" ")}`);
      assert(
        r.stderr.startsWith(`error[${code}]: ${message}`),
        `mur ${args.join(" ")}:\n${r.stderr}`,
      );
      assert(
        /\n\nusage: (\S+ )*(mur|main\.ts) /.test(r.stderr),
        `mur ${args.join(" ")} shows its usage`,
      );
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a real capsule: cancel by a task's label suffix; an ended task is refused (E-RUN-049, exit 1); an unknown one is E-RUN-048; a lost connection E-IO-003", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "surface",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: {
      tasks: [
        { match: "slow", turns: [{ steps: [{ text: "a" }, { delay_ms: 60_000 }] }] },
        { turns: [{ steps: [{ text: "done" }] }] },
      ],
    },
    args: ["--task", "quick"],
  });
  const env = { MURMUR_HOME: cap.home };
  try {
    const launch = await until("the launch task to complete", async () => {
      const r = await cap.rpc("ListTasks", {});
      const t = (r.result as { tasks: { id: string; status: { state: string } }[] }).tasks[0];
      return t?.status.state === "TASK_STATE_COMPLETED" ? t.id : undefined;
    });
    const ended = await runMur(["cancel", "@1", launch.slice(-6)], env);
    assertEquals(ended.code, 1, ended.stdout);
    assert(
      ended.stderr.startsWith(
        `error[E-RUN-049]: ${cap.ready.session_id} refused to cancel ${launch} (it ended completed): -32002 `,
      ),
      ended.stderr,
    );
    const unknown = await runMur(["cancel", "@1", "0000ff"], env);
    assertEquals(unknown.code, 1);
    assert(unknown.stderr.startsWith("error[E-RUN-048]: "), unknown.stderr);

    const sent = await cap.rpc("SendMessage", {
      message: { messageId: "m-slow", role: "ROLE_USER", parts: [{ text: "slow" }] },
      configuration: { returnImmediately: true },
    });
    const slow = (sent.result as { task: { id: string } }).task.id;
    const ok = await runMur(["cancel", "@1", slow.slice(-6)], env);
    assertEquals(ok.code, 0, ok.stderr);
    assert(ok.stdout.startsWith(`task:    ${slow}\nstate:   canceled\n`), ok.stdout);

    // A watch whose capsule goes away: the lost connection keeps its E-IO-003 (README "Following a
    // session").
    const url = cap.ready.url;
    cap.kill("SIGKILL");
    await cap.finished();
    const lost = await runMur(["watch", "--url", url]);
    assertEquals(lost.code, 1);
    assert(lost.stderr.startsWith(`error[E-IO-003]: could not connect to ${url}`), lost.stderr);
  } finally {
    await cap.close();
  }
});

Deno.test("every command mur --help lists, misspelt by a swap of two letters, gets did you mean that command", async () => {
  const top = await runMur(["--help"]);
  const names = [...top.stdout.split("commands:\n")[1].matchAll(/^ {2}([a-z]+) /gm)].map((m) =>
    m[1]
  );
  assert(names.includes("watch") && names.length >= 8, top.stdout);
  const home = await tempHome();
  try {
    for (const name of names.filter((n) => n.length >= 4)) {
      // Two neighbouring letters that differ, swapped (`approve` → `aprpove`, not itself).
      const i = [...name].findIndex((c, k) =>
        k > 0 && name[k + 1] !== undefined && c !== name[k + 1]
      );
      const slip = name.slice(0, i) + name[i + 1] + name[i] + name.slice(i + 2);
      const r = await runMur([slip], { MURMUR_HOME: home });
      assertEquals(r.code, 2, r.stderr);
      assert(
        r.stderr.startsWith(
          `error[E-CLI-001]: mur: unknown command '${slip}'; did you mean '${name}'?\n`,
        ),
        r.stderr,
      );
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
