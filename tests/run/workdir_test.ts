/**
 * The files a session writes (docs/running.md "Files"): `<manifest dir>/workdir/<session id>/` (or
 * `--workdir`) with MURMUR.md, task.md, trace.jsonl, out/result.txt and logs/; the launch task
 * from `--task` text, from a `--task` file, or from a task.md already in the workdir.
 */
import { looksLikePath } from "../../src/cli/task_path.ts";
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { manifest, ofType, readTrace, spawnRun } from "./helpers.ts";
import { runMur } from "../cli/helpers.ts";

/** The model answers with which task it was given, so the test sees what reached it. */
const ECHO = {
  tasks: [
    { match: "^from a file", turns: [{ steps: [{ text: "got the file" }] }] },
    { match: "^from task\\.md", turns: [{ steps: [{ text: "got task.md" }] }] },
    { match: "^literal", turns: [{ steps: [{ text: "got the literal text" }] }] },
    { turns: [{ steps: [{ text: "got something else" }] }] },
  ],
};

Deno.test("workdir: <manifest dir>/workdir/<session id> holds MURMUR.md, task.md, trace.jsonl, out/result.txt, logs/", async () => {
  const run = await spawnRun({
    manifest: manifest({ capabilities: { shell: { allow: ["bash"] } } }),
    script: ECHO,
    args: ["--task", "literal text, not a path", "--json"],
  });
  try {
    const ready = JSON.parse((await run.line())!);
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    const wd = ready.workdir as string;
    assertEquals(
      await Deno.realPath(wd),
      await Deno.realPath(`${run.dir}/workdir/${ready.session_id}`),
    );
    const names: string[] = [];
    for await (const e of Deno.readDir(wd)) names.push(e.name + (e.isDirectory ? "/" : ""));
    for (const want of ["MURMUR.md", "task.md", "trace.jsonl", "out/", "logs/"]) {
      assert.ok(names.includes(want), `${want} missing from ${names.join(", ")}`);
    }
    assertEquals(await Deno.readTextFile(`${wd}/task.md`), "literal text, not a path");
    assertEquals(await Deno.readTextFile(`${wd}/out/result.txt`), "got the literal text");

    const md = await Deno.readTextFile(`${wd}/MURMUR.md`);
    assert.match(md, /^# MURMUR\.md/);
    assert.ok(md.includes(ready.session_id), "MURMUR.md names the session");
    assert.ok(md.includes(ready.url), "MURMUR.md names the door's url (rewritten once it listens)");
    assert.ok(md.includes("runtest"), "MURMUR.md names the capsule");
    assert.match(md, /\*\*bash\*\*/, "MURMUR.md lists the shell tool");
    assert.ok(md.includes("\n- Context budget: not set (compaction not configured)\n"), md);
    // The layout lists what is there, and says which folders are made on first use.
    const layout = md.slice(md.indexOf("## Directory Layout"), md.indexOf("Tool descriptions"));
    for (const line of layout.split("\n").filter((l) => /^[├└]── /.test(l))) {
      const name = line.slice(4).split(/\s+/)[0];
      const there = await Deno.stat(`${wd}/${name}`).then(() => true, () => false);
      assertEquals(
        line.endsWith("created on first use"),
        !there && name !== "MURMUR.md",
        `${line}: ${name} is ${there ? "" : "not "}there`,
      );
    }
    assert.match(layout, /\n└── checkpoints\/ .*; not there yet, created on first use\n/);
    assert.match(layout, /\n├── task\.md +the launch task\n/);

    const trace = await readTrace(`${wd}/trace.jsonl`);
    assertEquals(trace[0].session_id, ready.session_id);
    assertEquals(ofType(trace, "task_start")[0].source, "task_md");
  } finally {
    await run.close();
  }
});

Deno.test("workdir: --task naming an existing file uses its contents (task.md is a copy)", async () => {
  const text = "from a file\nsecond line — ünïcode\n";
  const run = await spawnRun({
    manifest: manifest(),
    script: ECHO,
    files: { "tasks/job.md": text },
    args: ["--task", "tasks/job.md", "--json"], // relative to the cwd (the capsule's dir here)
  });
  try {
    const ready = JSON.parse((await run.line())!);
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    assertEquals(await Deno.readTextFile(`${ready.workdir}/task.md`), text);
    assertEquals(await Deno.readTextFile(`${ready.workdir}/out/result.txt`), "got the file");
    const start = ofType(await readTrace(`${ready.workdir}/trace.jsonl`), "task_start")[0];
    assertEquals(start.message_parts_bytes, new TextEncoder().encode(text).length);
  } finally {
    await run.close();
  }
});

Deno.test("workdir: --task that looks like a path but names no file is refused (E-IO-001), naming the file one slip away; nothing starts", async () => {
  const run = await spawnRun({
    manifest: manifest(),
    script: ECHO,
    files: { "task.md": "from a file" },
    args: ["--task", "./taks.md", "--json"],
  });
  try {
    const end = await run.end();
    assertEquals(end.code, 1, end.stderr);
    assertEquals(end.stdout, "");
    assertEquals(
      end.stderr,
      "error[E-IO-001]: --task ./taks.md: no such file; a --task value that looks like a path is read as a file, not sent as the task's text\n" +
        '  hint: did you mean --task ./task.md? To send text as the task, write it in words: --task "read ./taks.md"\n',
    );
    // Refused before anything was made: no session folder.
    assertEquals(await Deno.stat(`${run.dir}/workdir`).then(() => true, () => false), false);
  } finally {
    await run.close();
  }
});

Deno.test("workdir: --task text with words in it, or one word that is no path, is the task's text", async () => {
  for (const text of ["literal: see ./no-such-file.md", "literal"]) {
    const run = await spawnRun({
      manifest: manifest(),
      script: ECHO,
      args: ["--task", text, "--json"],
    });
    try {
      const ready = JSON.parse((await run.line())!);
      const end = await run.end();
      assertEquals(end.code, 0, end.stderr);
      assertEquals(await Deno.readTextFile(`${ready.workdir}/task.md`), text);
      assertEquals(
        await Deno.readTextFile(`${ready.workdir}/out/result.txt`),
        "got the literal text",
      );
    } finally {
      await run.close();
    }
  }
});

Deno.test("workdir: --workdir DIR is used as given; a task.md already there is the launch task", async () => {
  const run = await spawnRun({
    manifest: manifest(),
    script: ECHO,
    files: { "mine/task.md": "from task.md: do it" },
    args: ["--workdir", "mine", "--json"],
  });
  try {
    const ready = JSON.parse((await run.line())!);
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    assertEquals(await Deno.realPath(ready.workdir), await Deno.realPath(`${run.dir}/mine`));
    // The session's own files are in its folder under .murmur/; task.md stays in the workdir.
    const sd = `${run.dir}/mine/.murmur/${ready.session_id}`;
    assertEquals(await Deno.realPath(ready.session_dir), await Deno.realPath(sd));
    assertEquals(await Deno.readTextFile(`${sd}/out/result.txt`), "got task.md");
    assertEquals(await Deno.readTextFile(`${run.dir}/mine/task.md`), "from task.md: do it");
    const trace = await readTrace(`${sd}/trace.jsonl`);
    assertEquals(ofType(trace, "task_start").length, 1);
    assertEquals(ofType(trace, "session_end")[0].exit_status, "ok");
    // Nothing was created under the manifest's default workdir.
    await assert.rejects(Deno.stat(`${run.dir}/workdir`), Deno.errors.NotFound);
  } finally {
    await run.close();
  }
});

Deno.test("one session per workdir: a live session's workdir is refused; sessions one after another keep their traces apart; trace and --resume find them", async () => {
  const slow = {
    tasks: [
      { match: "^slow", turns: [{ steps: [{ text: "working" }, { delay_ms: 60_000 }] }] },
      { turns: [{ steps: [{ text: "done" }] }] },
    ],
  };
  const first = await spawnRun({
    manifest: manifest(),
    script: slow,
    args: ["--workdir", "shared", "--task", "slow one", "--json"],
  });
  const env = { MURMUR_HOME: first.home };
  try {
    const a = JSON.parse((await first.line())!);
    // A second run on the same workdir while the first is live: refused, nothing started.
    const refused = await runMur([
      "run",
      "--manifest",
      first.dir,
      "--workdir",
      `${first.dir}/shared`,
      "--task",
      "x",
    ], env);
    assertEquals(refused.code, 1, refused.stderr);
    assertEquals(refused.stdout, "");
    assert.match(
      refused.stderr,
      new RegExp(
        `^error\\[E-RUN-043\\]: the workdir ${first.dir}/shared holds a live session, ${a.session_id} \\(pid ${first.pid}, `,
      ),
    );
    assert.match(refused.stderr, /hint: one session runs in a workdir at a time/);
    assertEquals(
      (await Array.fromAsync(Deno.readDir(`${first.dir}/shared/.murmur`))).map((e) => e.name)
        .sort(),
      ["live.json", a.session_id].sort(),
    );

    first.signal("SIGTERM");
    assertEquals((await first.end()).code, 1);
    // The lock went with the session; the next one in the same workdir runs, in its own folder.
    const next = await runMur([
      "run",
      "--manifest",
      first.dir,
      "--workdir",
      `${first.dir}/shared`,
      "--task",
      "quick",
      "--json",
    ], env);
    assertEquals(next.code, 0, next.stderr);
    const b = JSON.parse(next.stdout.split("\n")[0]);
    assertEquals(b.session_dir, `${first.dir}/shared/.murmur/${b.session_id}`);
    for (const s of [a.session_id, b.session_id]) {
      const trace = await readTrace(`${first.dir}/shared/.murmur/${s}/trace.jsonl`);
      assertEquals(ofType(trace, "session_start").map((l) => l.session_id), [s]);
    }
    assertEquals(
      (await Array.fromAsync(Deno.readDir(`${first.dir}/shared/.murmur`))).map((e) => e.name)
        .sort(),
      [a.session_id, b.session_id].sort(),
      "no lock left behind",
    );
    // mur trace finds both under --workdir (the workdir given to mur run), newest first, apart.
    const steps = await runMur(["trace", "steps", "--workdir", `${first.dir}/shared`]);
    assertEquals(steps.code, 0, steps.stderr);
    assertEquals(steps.stdout.split("\n")[0], `session ${b.session_id}  runtest@0.3.0`);
    assertEquals(steps.stdout.match(/^ {2}task /gm)?.length, 1, steps.stdout);
    const older = await runMur(["trace", "show", "@2", "--workdir", `${first.dir}/shared`]);
    assert.ok(older.stdout.includes(`  session:   ${a.session_id}\n`), older.stdout);
    // --resume under the same --workdir continues the newest session there.
    const resumed = await runMur([
      "run",
      "--manifest",
      first.dir,
      "--workdir",
      `${first.dir}/shared`,
      "--resume",
      "--task",
      "again",
      "--json",
    ], env);
    assertEquals(resumed.code, 0, resumed.stderr);
    const c = JSON.parse(resumed.stdout.split("\n")[0]);
    const start = ofType(await readTrace(`${c.session_dir}/trace.jsonl`), "session_start")[0];
    assertEquals(start.resumed_from, b.session_id);
  } finally {
    await first.close();
  }
});

Deno.test("one session per workdir: a lock left by a killed session is taken over", async () => {
  const first = await spawnRun({
    manifest: manifest(),
    script: {
      tasks: [
        { match: "^slow", turns: [{ steps: [{ text: "a" }, { delay_ms: 60_000 }] }] },
        { turns: [{ steps: [{ text: "done" }] }] },
      ],
    },
    args: ["--workdir", "shared", "--task", "slow", "--json"],
  });
  try {
    const a = JSON.parse((await first.line())!);
    first.signal("SIGKILL");
    await first.end();
    assertEquals(
      JSON.parse(await Deno.readTextFile(`${first.dir}/shared/.murmur/live.json`)).session_id,
      a.session_id,
    );
    const next = await runMur([
      "run",
      "--manifest",
      first.dir,
      "--workdir",
      `${first.dir}/shared`,
      "--task",
      "quick",
    ], { MURMUR_HOME: first.home });
    assertEquals(next.code, 0, next.stderr);
  } finally {
    await first.close();
  }
});

Deno.test("a workdir an older mur used twice (two sessions in one trace.jsonl): mur trace reads each apart, --resume continues the newest", async () => {
  const run = await spawnRun({
    manifest: manifest(),
    script: ECHO,
    args: ["--task", "literal", "--json"],
  });
  try {
    const x = JSON.parse((await run.line())!);
    assertEquals((await run.end()).code, 0);
    const y = await runMur(["run", "--manifest", run.dir, "--task", "literal", "--json"], {
      MURMUR_HOME: run.home,
    });
    const yr = JSON.parse(y.stdout.split("\n")[0]);
    // The older layout: one folder, both sessions appended to its trace.jsonl, its conversation/.
    const old = `${run.dir}/old`;
    await Deno.mkdir(`${old}/conversation`, { recursive: true });
    const both = (await Deno.readTextFile(`${x.workdir}/trace.jsonl`)) +
      (await Deno.readTextFile(`${yr.workdir}/trace.jsonl`));
    await Deno.writeTextFile(`${old}/trace.jsonl`, both);
    for (const wd of [x.workdir, yr.workdir]) {
      for await (const f of Deno.readDir(`${wd}/conversation`)) {
        await Deno.copyFile(`${wd}/conversation/${f.name}`, `${old}/conversation/${f.name}`);
      }
    }
    for (const [address, sid] of [["@1", yr.session_id], ["@2", x.session_id]]) {
      const steps = await runMur(["trace", "steps", address, "--workdir", old]);
      assertEquals(steps.code, 0, steps.stderr);
      const lines = steps.stdout.split("\n");
      assertEquals(lines[0], `session ${sid}  runtest@0.3.0`);
      assertEquals(lines.filter((l) => l.startsWith("session ")).length, 1, steps.stdout);
      assertEquals(steps.stdout.match(/^ {2}task /gm)?.length, 1, steps.stdout);
    }
    const resumed = await runMur([
      "run",
      "--manifest",
      run.dir,
      "--workdir",
      old,
      "--resume",
      "--task",
      "literal",
      "--json",
    ], { MURMUR_HOME: run.home });
    assertEquals(resumed.code, 0, resumed.stderr);
    const r = JSON.parse(resumed.stdout.split("\n")[0]);
    assertEquals(
      ofType(await readTrace(`${r.session_dir}/trace.jsonl`), "session_start")[0].resumed_from,
      yr.session_id,
    );
  } finally {
    await run.close();
  }
});

Deno.test("workdir: what --task takes for a path: one word with a / or a file extension, never a URL or words", () => {
  for (const p of ["./taks.md", "tasks/job", "notes.txt", "/tmp/x", "../t.yaml"]) {
    assertEquals(looksLikePath(p), true, p);
  }
  for (const t of ["hello", "Say hello", "https://example.com/issue/12", "v1.2", "see ./a.md"]) {
    assertEquals(looksLikePath(t), false, t);
  }
});
