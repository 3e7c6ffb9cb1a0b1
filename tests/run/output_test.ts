/**
 * What `mur run` prints (docs/running.md): the human lines the moment the
 * door listens, `-v`, the `--json` readiness line and its keys, the status line, and exit codes.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { listTasks, manifest, portOf, runToEnd, spawnRun } from "./helpers.ts";

const HEX32 = /^ses_[0-9a-f]{32}$/;

/** The launch task takes a while, so the process is still running when the first lines arrive. */
const SLOW = {
  tasks: [{ turns: [{ steps: [{ text: "hello" }, { delay_ms: 1500 }, { text: " there" }] }] }],
};
const QUICK = { tasks: [{ turns: [{ steps: [{ text: "done" }] }] }] };

async function cardName(url: string): Promise<string> {
  const res = await fetch(
    `http://${url.replace("localhost", "127.0.0.1")}/.well-known/agent-card.json`,
    {
      signal: AbortSignal.timeout(5000),
    },
  );
  assertEquals(res.status, 200);
  return (await res.json()).name;
}

Deno.test("mur run: human lines — url and session while the task runs, status at the end, exit 0", async () => {
  const run = await spawnRun({ manifest: manifest(), script: SLOW, args: ["--task", "greet"] });
  try {
    const urlLine = await run.line();
    const sessionLine = await run.line();
    assert.match(urlLine!, /^murmur: url localhost:\d+$/);
    assert.match(sessionLine!, /^session: ses_[0-9a-f]{32}$/);
    const url = urlLine!.slice("murmur: url ".length);
    // The door listens when the line is printed, and the launch task is already registered.
    assertEquals(await cardName(url), "runtest");
    const tasks = await listTasks(url);
    assertEquals(tasks.length, 1);
    assert.ok(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"].includes(tasks[0].state));
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    const lines = end.stdout.trimEnd().split("\n");
    assertEquals(lines, [urlLine, sessionLine, "status: ok"]);
    assert.ok(end.stdout.endsWith("\n"));
    // The session named on stdout is the workdir's folder.
    const id = sessionLine!.slice("session: ".length);
    await Deno.stat(`${run.dir}/workdir/${id}/trace.jsonl`);
  } finally {
    await run.close();
  }
});

Deno.test("mur run -v: workdir, manifest, driver, containment, skills, page, watch and stop lines after the session line", async () => {
  const run = await spawnRun({
    manifest: manifest(),
    script: QUICK,
    args: ["--task", "x", "-v"],
    manifestFile: true,
  });
  try {
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    const lines = end.stdout.trimEnd().split("\n");
    assertEquals(lines.length, 11, end.stdout);
    assert.match(lines[0], /^murmur: url localhost:\d+$/);
    assert.match(lines[1], /^session: ses_[0-9a-f]{32}$/);
    const id = lines[1].slice("session: ".length);
    const [k2, workdir] = lines[2].split(": ");
    const [k3, manifestPath] = lines[3].split(": ");
    assertEquals([k2, k3], ["workdir", "manifest"]);
    const real = await Deno.realPath(run.dir);
    assertEquals(await Deno.realPath(workdir), `${real}/workdir/${id}`);
    assert.ok(workdir.startsWith("/"));
    assertEquals(await Deno.realPath(manifestPath), `${real}/murmur.yaml`);
    assertEquals(lines[4], "driver: scripted");
    // What this host reaches decides the class (docs/containment.md "The default").
    assert.match(lines[5], /^containment: (scoped|advisory) \(declared none; host reaches /);
    assertEquals(lines[6], "skills: none");
    assertEquals(lines[7], `page: http://${lines[0].slice("murmur: url ".length)}/ui`);
    assert.match(lines[8], new RegExp(`^watch: \\S.* watch ${id}$`));
    assert.match(lines[9], new RegExp(`^stop: \\S.* stop ${id}$`));
    assertEquals(lines[10], "status: ok");
  } finally {
    await run.close();
  }
});

Deno.test("mur run --json: exactly one readiness line with url, pid, session_id, name, version, workdir, session_dir, and the launch task's id", async () => {
  const run = await spawnRun({
    manifest: manifest(),
    script: SLOW,
    args: ["--task", "greet", "--json", "-v"],
  });
  try {
    const line = await run.line();
    const ready = JSON.parse(line!);
    assertEquals(Object.keys(ready), [
      "url",
      "pid",
      "session_id",
      "name",
      "version",
      "workdir",
      "session_dir",
      "task_id",
    ]);
    // Without --workdir the session folder is the workdir itself (docs/running.md "Files").
    assertEquals(ready.session_dir, ready.workdir);
    assert.match(ready.url, /^localhost:\d+$/);
    assertEquals(ready.pid, run.pid);
    assert.match(ready.session_id, HEX32);
    assertEquals(ready.name, "runtest");
    assertEquals(ready.version, "0.3.0");
    assert.ok(ready.workdir.startsWith("/"), ready.workdir);
    assert.ok(ready.workdir.endsWith(`/workdir/${ready.session_id}`), ready.workdir);
    assert.ok((await Deno.stat(ready.workdir)).isDirectory);
    // Registered before the line: ListTasks finds the launch task at once, the id the line named.
    const listed = await listTasks(ready.url);
    assertEquals(listed.length, 1);
    assertEquals(listed[0].id, ready.task_id);
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    assertEquals(end.stdout, line + "\n", "--json beats -v and prints no status line");
  } finally {
    await run.close();
  }
});

Deno.test("mur run --json: tokens on a door that declares network.authentication", async () => {
  const run = await spawnRun({
    manifest: manifest({
      network: {
        authentication: {
          scheme: "bearer",
          credentials: { watcher: { scopes: ["GetTask", "ListTasks", "murmur.WatchSession"] } },
        },
      },
    }),
    script: QUICK,
    args: ["--task", "x", "--json"],
  });
  try {
    const ready = JSON.parse((await run.line())!);
    assertEquals(Object.keys(ready), [
      "url",
      "pid",
      "session_id",
      "name",
      "version",
      "workdir",
      "session_dir",
      "tokens",
      "task_id",
    ]);
    assertEquals(Object.keys(ready.tokens).sort(), ["operator", "watcher"]);
    assert.notEqual(ready.tokens.operator, ready.tokens.watcher);
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
  } finally {
    await run.close();
  }
});

Deno.test("mur run --port N: the door listens on N", async () => {
  // An OS-assigned port, released just before the run (another process could take it: unlikely).
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const end = await runToEnd({
    manifest: manifest(),
    script: QUICK,
    args: ["--task", "x", "--port", String(port)],
  });
  assertEquals(end.code, 0, end.stderr);
  assertEquals(portOf(end.stdout.split("\n")[0].slice("murmur: url ".length)), port);
});

Deno.test("mur run: exit 1 and a coded diagnostic for a task that does not end ok", async () => {
  const end = await runToEnd({
    manifest: manifest(),
    script: { tasks: [{ turns: [{ steps: [{ error: "provider overloaded" }] }] }] },
    args: ["--task", "x"],
  });
  assertEquals(end.code, 1);
  assertEquals(end.stdout.trimEnd().split("\n").at(-1), "status: failed");
  assert.match(end.stderr, /error\[E-RUN-040\]: .*provider overloaded/);
});
