/**
 * Launches that fail before the door listens (docs/running.md): nothing on
 * stdout, one coded `error[E-…]` on stderr, exit 1, and nothing left running (no running record,
 * the process gone).
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type RunEnd, runningFiles, spawnRun } from "./helpers.ts";

/** Files override the generated murmur.yaml; `inspect` looks at the capsule dir before cleanup. */
async function launchFails(
  files: Record<string, string>,
  args: string[] = [],
  opts: {
    manifestArg?: string;
    inspect?: (dir: string) => Promise<void>;
    /** Runs in the capsule dir before mur run starts. */
    before?: (dir: string) => Promise<void>;
  } = {},
): Promise<RunEnd> {
  const run = await spawnRun({
    manifest: { name: "unused", version: "0" },
    files,
    args: ["--task", "hi", ...args],
    manifestArg: opts.manifestArg,
    before: opts.before,
  });
  try {
    const end = await run.end(20_000);
    assertEquals(end.stdout, "", "nothing on stdout");
    assertEquals(end.code, 1, end.stderr);
    assertEquals(await runningFiles(run.home), [], "no running record");
    assert.match(end.stderr, /^error\[E-[A-Z]+-\d{3}\]: /m);
    await opts.inspect?.(run.dir);
    return end;
  } finally {
    await run.close();
  }
}

const SCRIPTED = `inference:
  transport: http
  driver: scripted
  script: script.yaml
`;

Deno.test("bad input: a missing manifest → E-IO-001 naming the path", async () => {
  const end = await launchFails({}, [], { manifestArg: "no/such/murmur.yaml" });
  assert.match(end.stderr, /^error\[E-IO-001\]: .*no\/such\/murmur\.yaml/m);
});

Deno.test("bad input: a manifest folder without murmur.yaml → E-IO-001", async () => {
  const end = await launchFails({ "empty/README": "nothing here" }, [], { manifestArg: "empty" });
  assert.match(end.stderr, /^error\[E-IO-001\]: .*empty/m);
});

Deno.test("bad input: YAML syntax error → E-MAN-002 with line:col", async () => {
  const yaml = `name: broken
version: "1"
${SCRIPTED}capabilities:
  shell:
    allow: [bash
`;
  const end = await launchFails({ "murmur.yaml": yaml, "script.yaml": "tasks: []\n" });
  const m = /^error\[E-MAN-002\]: (.*)$/m.exec(end.stderr);
  assert.ok(m, end.stderr);
  const at = /murmur\.yaml:(\d+):(\d+)/.exec(m[1]);
  assert.ok(at, `no line:col in ${m[1]}`);
  // The unclosed flow sequence starts on line 9; the parser reports it there or after.
  assert.ok(Number(at[1]) >= 9 && Number(at[1]) <= 10, m[1]);
  assert.ok(Number(at[2]) >= 1);
});

Deno.test("bad input: unknown driver → E-MAN-003 naming inference.driver", async () => {
  const yaml = `name: x
version: "1"
inference:
  transport: http
  driver: gpt-9000
`;
  const end = await launchFails({ "murmur.yaml": yaml });
  assert.match(end.stderr, /^error\[E-MAN-003\]: inference\.driver: .*gpt-9000/m);
});

Deno.test("bad input: a missing script file → E-IO-001 naming it", async () => {
  const yaml = `name: x
version: "1"
inference:
  transport: http
  driver: scripted
  script: scripts/nowhere.yaml
`;
  const end = await launchFails({ "murmur.yaml": yaml });
  assert.match(end.stderr, /^error\[E-IO-001\]: .*scripts\/nowhere\.yaml/m);
});

Deno.test("bad input: a port in use → E-RUN-010, nothing on stdout, nothing left running", async () => {
  const holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (holder.addr as Deno.NetAddr).port;
  try {
    const end = await launchFails(
      {
        "murmur.yaml": `name: x\nversion: "1"\n${SCRIPTED}`,
        "script.yaml": "tasks:\n  - turns: [{steps: [{text: never}]}]\n",
      },
      ["--port", String(port)],
      {
        inspect: async (dir) => {
          // The task never ran: the model's answer was not written anywhere.
          const sessions: string[] = [];
          try {
            for await (const d of Deno.readDir(`${dir}/workdir`)) sessions.push(d.name);
          } catch { /* no workdir at all */ }
          for (const s of sessions) {
            const result = await Deno.readTextFile(`${dir}/workdir/${s}/out/result.txt`)
              .catch(() => null);
            assert.notEqual(result, "never");
          }
        },
      },
    );
    assert.match(end.stderr, new RegExp(`^error\\[E-RUN-010\\]: .*${port}`, "m"));
  } finally {
    holder.close();
  }
});

/** A launch error is the coded lines and nothing else: no stack trace, no "Uncaught". */
function noStack(stderr: string): void {
  assert.ok(!/Uncaught| {4}at |\.ts:\d+:\d+\)/.test(stderr), `a stack trace on stderr:\n${stderr}`);
  assert.ok(stderr.trimEnd().split("\n").length <= 2, `more than an error and a hint:\n${stderr}`);
}

Deno.test("bad input: paths a flag or a manifest value names → coded errors naming the value, never a stack trace", async () => {
  const scripted = {
    "murmur.yaml": `name: x\nversion: "1"\n${SCRIPTED}`,
    "script.yaml": "tasks:\n  - turns: [{steps: [{text: hi}]}]\n",
  };
  // --workdir naming a file, and a folder under a file.
  for (const wd of ["afile", "afile/sub"]) {
    const end = await launchFails({ ...scripted, afile: "not a folder" }, ["--workdir", wd]);
    assert.match(
      end.stderr,
      new RegExp(
        `^error\\[E-IO-005\\]: --workdir ${wd}: could not create the session's workdir there: a file is in the way where a folder is needed`,
      ),
    );
    assert.match(end.stderr, /hint: give --workdir a folder, or a path where one can be created/);
    noStack(end.stderr);
  }
  // A full disk where the launch task is written (task.md is /dev/full).
  const full = await launchFails(scripted, ["--workdir", "wd"], {
    before: async (dir) => {
      await Deno.mkdir(`${dir}/wd`);
      await Deno.symlink("/dev/full", `${dir}/wd/task.md`);
    },
  });
  assert.match(
    full.stderr,
    /^error\[E-IO-006\]: --workdir .*wd: could not write the launch task to task\.md: the file system refused the write/,
  );
  noStack(full.stderr);
  // inference.script and a command tool's program naming folders.
  const scriptDir = await launchFails({
    "murmur.yaml": `name: x\nversion: "1"\n${SCRIPTED.replace("script.yaml", "scripts")}`,
    "scripts/README": "a folder",
  });
  assert.match(
    scriptDir.stderr,
    /^error\[E-IO-005\]: inference\.script: the script .*scripts is a folder, not a file/,
  );
  noStack(scriptDir.stderr);
  const toolDir = await launchFails({
    ...scripted,
    "murmur.yaml": `name: x\nversion: "1"\n${SCRIPTED}tools:
  - name: weather
    description: weather
    input_schema: {type: object}
    command: ["./tools"]
`,
    "tools/README": "a folder",
  });
  assert.match(
    toolDir.stderr,
    /^error\[E-IO-005\]: tools\[0\]\.command: the program .*tools is a folder, not a file/,
  );
  noStack(toolDir.stderr);
});
