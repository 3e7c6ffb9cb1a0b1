/**
 * Settling containment at launch (docs/containment.md "Declaring a floor", "The default"), through
 * real `mur run` processes: a floor the host cannot reach is E-CAP-003 with the facts' message and
 * leaves no workdir; `--containment` raises the floor; nothing declared runs at scoped where the
 * host reaches it, else advisory with W-SEC-040; `workdir_exec` caps at advisory; `-v` says the
 * class in one line and `session_start` carries declared and achieved. A host without bubblewrap
 * is made by naming a missing one (`MURMUR_BWRAP`).
 */
import assert from "node:assert/strict";
import { baseEnv, runMur, startMur } from "../helpers/mur.ts";
import { until } from "../helpers/until.ts";
import { loadManifest } from "../../src/manifest/load.ts";
import { MurError } from "../../src/errors.ts";
import { probeHost } from "../../src/containment/probe.ts";
import { containmentConfig } from "../../src/manifest/containment_keys.ts";

const host = await probeHost((n) => Deno.env.get(n));
const NO_BWRAP = "mur-no-such-bwrap";

async function capsule(extra: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "mur-containment-launch-" });
  await Deno.writeTextFile(
    `${dir}/murmur.yaml`,
    `name: contained\nversion: "0.1.0"\ninference:\n  driver: scripted\n${extra}`,
  );
  return dir;
}

async function run(dir: string, args: string[], env: Record<string, string> = {}) {
  return await runMur({
    args: ["run", "--manifest", dir, "--task", "hello", ...args],
    env: { ...baseEnv(), MURMUR_HOME: `${dir}/home`, ...env },
    clearEnv: true,
    removeOnClose: [dir],
  }, 60_000);
}

function sessionStart(dir: string): Record<string, unknown> {
  const ses = [...Deno.readDirSync(`${dir}/workdir`)][0].name;
  const line = Deno.readTextFileSync(`${dir}/workdir/${ses}/trace.jsonl`).split("\n")
    .find((l) => l.includes('"session_start"'))!;
  return JSON.parse(line);
}

const exists = (p: string) => {
  try {
    Deno.statSync(p);
    return true;
  } catch {
    return false;
  }
};

Deno.test("containment: a floor this host cannot reach is E-CAP-003 with the reason, before any workdir is made", async () => {
  const dir = await capsule("containment: scoped\n");
  try {
    const end = await runMur({
      args: ["run", "--manifest", dir, "--task", "hello"],
      env: { ...baseEnv(), MURMUR_HOME: `${dir}/home`, MURMUR_BWRAP: NO_BWRAP },
      clearEnv: true,
    }, 60_000);
    assert.equal(end.code, 1, end.stderr);
    assert.match(
      end.stderr,
      new RegExp(
        `^error\\[E-CAP-003\\]: declared containment class 'scoped' is not achievable on this host \\(achieved: 'advisory'\\): bubblewrap \\(${NO_BWRAP}\\) was not found on PATH; install it \\(Debian/Ubuntu: apt-get install bubblewrap\\)$`,
        "m",
      ),
    );
    assert.ok(!exists(`${dir}/workdir`), "a workdir was made");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("containment: --containment raises the manifest's floor (advisory → sealed) and is refused the same way", async () => {
  const dir = await capsule("containment: advisory\n");
  try {
    const end = await runMur({
      args: ["run", "--manifest", dir, "--task", "hello", "--containment", "sealed"],
      env: { ...baseEnv(), MURMUR_HOME: `${dir}/home`, MURMUR_BWRAP: NO_BWRAP },
      clearEnv: true,
    }, 60_000);
    assert.equal(end.code, 1);
    assert.match(
      end.stderr,
      /error\[E-CAP-003\]: declared containment class 'sealed' is not achievable/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("containment: nothing declared on a host without bubblewrap runs advisory, with W-SEC-040 and the -v line", async () => {
  const dir = await capsule("");
  const end = await run(dir, ["-v"], { MURMUR_BWRAP: NO_BWRAP });
  assert.equal(end.code, 0, end.stderr);
  assert.match(
    end.stderr,
    /warning\[W-SEC-040\]: processes this capsule starts run unconfined \(containment advisory\): bubblewrap/,
  );
  assert.match(
    end.stdout,
    /^containment: advisory \(declared none; host reaches advisory; bubblewrap \(mur-no-such-bwrap\) was not found on PATH/m,
  );
});

Deno.test({
  name:
    "containment: nothing declared runs scoped where the host reaches it; --containment sealed is said in -v and session_start",
  ignore: host.reach !== "sealed",
  fn: async () => {
    const plain = await capsule("");
    try {
      const end = await runMur({
        args: ["run", "--manifest", plain, "--task", "hello", "-v"],
        env: { ...baseEnv(), MURMUR_HOME: `${plain}/home` },
        clearEnv: true,
      }, 60_000);
      assert.equal(end.code, 0, end.stderr);
      assert.match(end.stdout, /^containment: scoped \(declared none; host reaches sealed\)$/m);
      const start = sessionStart(plain);
      assert.equal(start.containment_declared, null);
      assert.equal(start.containment_achieved, "scoped");
    } finally {
      await Deno.remove(plain, { recursive: true });
    }
    const raised = await capsule("containment: scoped\n");
    try {
      const end = await runMur({
        args: ["run", "--manifest", raised, "--task", "hello", "-v", "--containment", "sealed"],
        env: { ...baseEnv(), MURMUR_HOME: `${raised}/home` },
        clearEnv: true,
      }, 60_000);
      assert.equal(end.code, 0, end.stderr);
      assert.match(end.stdout, /^containment: sealed \(declared sealed; host reaches sealed\)$/m);
      const start = sessionStart(raised);
      assert.equal(start.containment_declared, "sealed");
      assert.equal(start.containment_achieved, "sealed");
    } finally {
      await Deno.remove(raised, { recursive: true });
    }
  },
});

Deno.test("containment: workdir_exec caps at advisory: W-SEC-011 without a floor, E-CAP-003 with one", async () => {
  const capped = await capsule("capabilities:\n  filesystem:\n    workdir_exec: true\n");
  const end = await run(capped, ["-v"]);
  assert.equal(end.code, 0, end.stderr);
  assert.match(end.stderr, /warning\[W-SEC-011\]: capabilities\.filesystem\.workdir_exec is true/);
  assert.match(end.stdout, /^containment: advisory /m);
  const floor = await capsule(
    "containment: scoped\ncapabilities:\n  filesystem:\n    workdir_exec: true\n",
  );
  const refused = await run(floor, []);
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /error\[E-CAP-003\]: declared containment class 'scoped' is not achievable on this host \(achieved: 'advisory'\): capabilities\.filesystem\.workdir_exec is true, which caps containment at advisory/,
  );
});

Deno.test("containment: --containment takes advisory, scoped or sealed (E-CLI-003 otherwise, nothing run)", async () => {
  const dir = await capsule("");
  const end = await run(dir, ["--containment", "strict"]);
  assert.equal(end.code, 2);
  assert.match(end.stderr, /E-CLI-003.*--containment.*strict.*one of advisory, scoped, sealed/);
  assert.ok(!exists(`${dir}/workdir`));
});

Deno.test("containment keys: bad network.allow entries are E-CAP-001, a bad scope E-CAP-002, each with the facts' message", async () => {
  const cases: [string, string, RegExp][] = [
    [
      'network:\n    allow: ["ftp://files.example"]',
      "E-CAP-001",
      /^invalid network allow entry 'ftp:\/\/files\.example': a URL entry must be http:\/\/ or https:\/\/$/,
    ],
    [
      'network:\n    allow: ["https://api.example.com/v1"]',
      "E-CAP-001",
      /^invalid network allow entry 'https:\/\/api\.example\.com\/v1': a URL entry takes no path, query or fragment$/,
    ],
    ['network:\n    allow: ["localhost:70000"]', "E-CAP-001", /the port must be 1 to 65535/],
    [
      "filesystem:\n    scope: /etc",
      "E-CAP-002",
      /^invalid filesystem scope '\/etc': scope must be relative to the workdir$/,
    ],
    [
      "filesystem:\n    scope: src/../../x",
      "E-CAP-002",
      /^invalid filesystem scope 'src\/\.\.\/\.\.\/x': cannot escape the workdir via '\.\.'$/,
    ],
  ];
  for (const [caps, code, message] of cases) {
    const dir = await capsule(`capabilities:\n  ${caps}\n`);
    try {
      await assert.rejects(loadManifest(dir, {}), (e: unknown) => {
        assert.ok(e instanceof MurError);
        assert.equal(e.code, code);
        assert.match(e.message, message);
        return true;
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("containment keys: the facts' defaults, sizes with units, entries parsed", async () => {
  const dir = await capsule(
    'containment: sealed\ncapabilities:\n  network:\n    allow: ["https://api.example.com", "localhost:8080", "pypi.org"]\n    unix_sockets: true\n  filesystem:\n    scope: ./src/\n  resources:\n    memory: 512MiB\n    max_file_size: 1048576\n',
  );
  try {
    const { manifest } = await loadManifest(dir, {});
    const c = manifest.containment!;
    assert.equal(c.floor, "sealed");
    assert.equal(c.scope, "src");
    assert.equal(c.unixSockets, true);
    assert.deepEqual(c.networkAllow!.map((e) => [e.host, e.port]), [["api.example.com", 443], [
      "localhost",
      8080,
    ], ["pypi.org", null]]);
    assert.deepEqual(c.resources, {
      maxProcesses: 128,
      maxOpenFiles: 1024,
      maxFileSize: 1048576,
      cpuSeconds: 3600,
      memory: 512 * 1024 * 1024,
      pids: 256,
    });
    const bare = await capsule("");
    try {
      const d = (await loadManifest(bare, {})).manifest.containment ?? containmentConfig({});
      assert.equal(d.floor, null);
      assert.equal(d.networkAllow, null);
      assert.equal(d.resources.memory, 2 * 1024 ** 3);
      assert.equal(d.resources.maxFileSize, 4 * 1024 ** 3);
    } finally {
      await Deno.remove(bare, { recursive: true });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Host pids whose command line holds `marker`. */
function withMarker(marker: string): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).replaceAll("\0", " ");
      if (cmd.includes(marker) && !cmd.includes("bwrap") && !cmd.includes("prlimit")) {
        out.push(Number(e.name));
      }
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

Deno.test({
  name:
    "containment: SIGTERM to mur while a scoped command runs stops the command and all it forked",
  ignore: host.reach === "advisory",
  fn: async () => {
    const dir = await capsule(
      "  script: script.yaml\ncontainment: scoped\ncapabilities:\n  shell:\n    allow: [bash]\n",
    );
    const marker = `61.${Math.floor(Math.random() * 1e6)}`;
    await Deno.writeTextFile(
      `${dir}/script.yaml`,
      JSON.stringify({
        tasks: [{
          turns: [{
            steps: [{
              tool_call: {
                id: "s",
                name: "bash",
                input: { command: `sleep ${marker} & exec sleep ${marker}` },
              },
            }],
          }, { steps: [{ text: "slept" }] }],
        }],
      }),
    );
    const mur = await startMur({
      args: ["run", "--manifest", dir, "--task", "go", "--json"],
      env: { ...baseEnv(), MURMUR_HOME: `${dir}/home` },
      clearEnv: true,
      readyMs: 60_000,
      removeOnClose: [dir],
    });
    try {
      await until(
        "both sleeps to run",
        () => withMarker(marker).length === 2 ? true : undefined,
        20_000,
      );
      mur.kill("SIGTERM");
      const end = await mur.end(30_000);
      assert.equal(end.code, 1, end.stderr);
      await until(
        "both sleeps to be gone",
        () => withMarker(marker).length === 0 ? true : undefined,
        10_000,
      );
    } finally {
      for (const pid of withMarker(marker)) Deno.kill(pid, "SIGKILL");
      await mur.close();
    }
  },
});

Deno.test({
  name:
    "containment: filesystem.scope is the only writable part of the workdir (made when missing); the rest reads but refuses writes",
  ignore: host.reach === "advisory",
  fn: async () => {
    const dir = await capsule(
      "  script: script.yaml\ncontainment: scoped\ncapabilities:\n  shell:\n    allow: [bash]\n  filesystem:\n    scope: out\n",
    );
    const call = (id: string, command: string) => ({
      steps: [{ tool_call: { id, name: "bash", input: { command: `(${command}) 2>&1` } } }],
    });
    await Deno.writeTextFile(
      `${dir}/script.yaml`,
      JSON.stringify({
        tasks: [{
          turns: [
            call("in", "echo kept > out/kept.txt && cat out/kept.txt"),
            call("root", "echo no > root.txt; cat task.md"),
            { steps: [{ text: "done" }] },
          ],
        }],
      }),
    );
    const end = await runMur({
      args: ["run", "--manifest", dir, "--task", "hello"],
      env: { ...baseEnv(), MURMUR_HOME: `${dir}/home` },
      clearEnv: true,
    }, 60_000);
    try {
      assert.equal(end.code, 0, end.stderr);
      checkScope(dir);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

function checkScope(dir: string): void {
  const ses = [...Deno.readDirSync(`${dir}/workdir`)][0].name;
  const wd = `${dir}/workdir/${ses}`;
  assert.equal(Deno.readTextFileSync(`${wd}/out/kept.txt`), "kept\n");
  assert.ok(!exists(`${wd}/root.txt`));
  const record = [...Deno.readDirSync(`${wd}/conversation`)].map((f) =>
    Deno.readTextFileSync(`${wd}/conversation/${f.name}`)
  ).join("");
  assert.match(record, /root\.txt: Read-only file system/);
  assert.match(record, /Read-only file system\\nhello/, "the rest of the workdir reads");
}
