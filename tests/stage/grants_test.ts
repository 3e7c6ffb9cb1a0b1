/**
 * An artifact's own `capabilities` on real `mur run` processes (docs/manifest.md "Artifact
 * capabilities"): the host variables a hook artifact sees are the baseline and its grant
 * (default-deny), a tool artifact's are everything a command tool gets unless its grant narrows
 * them, and a tool artifact's `filesystem.read_only` refuses a write through that tool only. The
 * capsule itself has every variable: a `hooks:` entry and an ungranted tool artifact see them.
 * A grant beyond what mur hands that kind of process stops the launch with E-CAP-016.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { runToEnd, spawnRun } from "../run/helpers.ts";
import { finishedWithin, streamTask } from "../session/helpers.ts";
import { artifactFrames, readTrace } from "./helpers.ts";

/** What the capsule's environment holds that the grants decide about. */
const HOST = { MUR_GRANTED: "beta", MUR_NARROWED: "gamma" };

/** Prints the two variables (or `unset`); writes "written" to the input's `path` when it has one. */
const PROBE_TOOL = `#!/bin/sh
in=$(cat)
p=$(printf %s "$in" | sed -n 's/.*"path":"\\([^"]*\\)".*/\\1/p')
if [ -n "$p" ]; then mkdir -p "$(dirname "$p")"; printf written >"$p"; fi
printf 'MUR_GRANTED=%s MUR_NARROWED=%s\\n' "\${MUR_GRANTED-unset}" "\${MUR_NARROWED-unset}"
`;

/** Writes what it sees to hook-<name>.env in the workdir, then answers none. */
const PROBE_HOOK = `#!/bin/sh
cat >/dev/null
printf 'MUR_GRANTED=%s MUR_NARROWED=%s CONFIG=%s PATH=%s\\n' "\${MUR_GRANTED-unset}" \\
  "\${MUR_NARROWED-unset}" "\${MURMUR_ARTIFACT_CONFIG-unset}" "\${PATH:+set}" \\
  >"$MURMUR_WORKDIR/hook-$MURMUR_HOOK_NAME.env"
echo '{}'
`;

const FILES = {
  "probe/murmur.yaml":
    "description: Print two variables; write the input's path\ninput_schema:\n  type: object\n  properties: { path: { type: string }, content: { type: string } }\ncommand: [./probe.sh]\n",
  "probe/probe.sh": PROBE_TOOL,
  "hook/murmur.yaml": "binding: on-session-start\ncommand: [./hook.sh]\n",
  "hook/hook.sh": PROBE_HOOK,
  "plain-hook.sh": PROBE_HOOK,
};

const call = (id: string, name: string, input: Record<string, unknown> = {}) => ({
  steps: [{ tool_call: { id, name, input } }],
});

Deno.test("artifact grants: hooks default-deny, tools inherit and narrow, a read_only narrowing refuses that tool's write", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "grants",
      version: "0.1.0",
      lifecycle: { task_acceptance: "single" },
      hooks: [{ name: "plain", binding: "on-session-start", command: ["./plain-hook.sh"] }],
      artifacts: [
        { name: "denied", runtime: "hook", source: "hook", local_source: true, config: { a: 1 } },
        {
          name: "granted",
          runtime: "hook",
          source: "hook",
          local_source: true,
          capabilities: { env: { allow: ["MUR_GRANTED"] } },
        },
        { name: "wide", source: "probe", local_source: true },
        {
          name: "narrow",
          source: "probe",
          local_source: true,
          capabilities: {
            env: { allow: ["MUR_GRANTED"] },
            filesystem: { read_only: ["notes"] },
          },
        },
      ],
    },
    files: FILES,
    env: HOST,
    script: {
      tasks: [{
        turns: [
          call("toolu_1", "wide"),
          call("toolu_2", "narrow"),
          call("toolu_3", "narrow", { path: "notes/a.txt", content: "x" }),
          call("toolu_4", "wide", { path: "notes/b.txt", content: "x" }),
          { steps: [{ text: "done" }] },
        ],
      }],
    },
  });
  try {
    const events = await streamTask(cap, "probe");
    const fin = await finishedWithin(cap);
    assert.equal(fin.code, 0, fin.stderr);
    const dir = cap.ready.workdir;
    const seen = (hook: string) => Deno.readTextFile(`${dir}/hook-${hook}.env`);
    // The capsule has both: a hooks: entry sees them (the control).
    assert.equal(
      await seen("plain"),
      "MUR_GRANTED=beta MUR_NARROWED=gamma CONFIG=unset PATH=set\n",
    );
    // Default-deny: the baseline and mur's own variables only; then what the grant adds.
    assert.equal(
      await seen("denied"),
      'MUR_GRANTED=unset MUR_NARROWED=unset CONFIG={"a":1} PATH=set\n',
    );
    assert.equal(
      await seen("granted"),
      "MUR_GRANTED=beta MUR_NARROWED=unset CONFIG=unset PATH=set\n",
    );

    const frames = artifactFrames(events);
    // The refused call has no frame (a policy refusal never reached a tool): its line says it.
    assert.deepEqual(frames.map((f) => f.toolCallId), ["toolu_1", "toolu_2", "toolu_4"]);
    const fenced = (name: string, text: string) =>
      `<untrusted-content source=tool:${name}>\n${text}\n</untrusted-content>`;
    assert.equal(frames[0].content, fenced("wide", "MUR_GRANTED=beta MUR_NARROWED=gamma\n"));
    assert.equal(frames[1].content, fenced("narrow", "MUR_GRANTED=beta MUR_NARROWED=unset\n"));

    // The narrow tool's write into notes/ is refused before it runs; the wide tool's is not.
    const reason =
      "refused: this narrow call would write to 'notes/a.txt' (input key path), which is inside the read-only path 'notes' (the capabilities.filesystem.read_only of artifact 'narrow'). Nothing was run; write somewhere else instead.";
    assert.equal(frames[2].content, fenced("wide", "MUR_GRANTED=beta MUR_NARROWED=gamma\n"));
    await assert.rejects(() => Deno.stat(`${dir}/notes/a.txt`), Deno.errors.NotFound);
    assert.equal(await Deno.readTextFile(`${dir}/notes/b.txt`), "written");
    const trace = await readTrace(dir);
    const denied = trace.filter((e) => e.event_type === "protected_path_denied");
    assert.deepEqual(
      denied.map((e) => [e.target, e.path, e.rule, e.signal, e.reason]),
      [["narrow", "notes/a.txt", "notes", "input key path", reason]],
    );
    assert.deepEqual(
      trace.filter((e) => e.event_type === "tool_call").map((e) => [e.tool_name, e.status]),
      [["wide", "ok"], ["narrow", "ok"], ["narrow", "error"], ["wide", "ok"]],
    );
  } finally {
    await cap.close();
  }
});

Deno.test("artifact grants: a grant beyond what mur hands a hook stops mur run with E-CAP-016, nothing started", async () => {
  const end = await runToEnd({
    manifest: {
      name: "grants",
      version: "0.1.0",
      artifacts: [{
        name: "greedy",
        runtime: "hook",
        source: "hook",
        local_source: true,
        capabilities: { env: { allow: ["MUR_GRANTED", "ANTHROPIC_API_KEY"] } },
      }],
    },
    files: FILES,
    args: ["--task", "go"],
  });
  assert.equal(end.code, 1);
  assert.match(
    end.stderr,
    /error\[E-CAP-016\]: artifacts\[0\]\.capabilities\.env\.allow\[1\]: 'ANTHROPIC_API_KEY' widens the artifact's grant beyond the capsule's: mur hands no hook a credential the runtime holds \(\*_API_KEY, \*_AUTH_TOKEN, \*_OAUTH_TOKEN\)\n\s*hint: a packaged tool \(runtime: tool\) sees the operator's keys; a hook does not/,
  );
  assert.equal(end.stdout, "");
});

/** A config whose compact JSON is exactly `bytes` long, 3-byte characters up to its end. */
function configOfBytes(bytes: number): Record<string, string> {
  const room = bytes - 8; // {"t":"…"}
  return { t: "x".repeat(room % 3) + "語".repeat(Math.floor(room / 3)) };
}

Deno.test("artifact config at 65,536 bytes of multi-byte text reaches the hook byte for byte; one byte more stops mur run", async () => {
  const manifest = (config: Record<string, string>) => ({
    name: "config",
    version: "0.1.0",
    artifacts: [{ name: "keeper", runtime: "hook", source: "keep", local_source: true, config }],
  });
  const files = {
    "keep/murmur.yaml": "binding: on-stage\ncommand: [./keep.sh]\n",
    "keep/keep.sh":
      `#!/bin/sh\ncat >/dev/null\nprintf %s "$MURMUR_ARTIFACT_CONFIG" >"$MURMUR_WORKDIR/config.json"\necho '{}'\n`,
  };
  const exact = configOfBytes(65_536);
  const run = await spawnRun({ manifest: manifest(exact), files, args: ["--task", "go"] });
  try {
    const end = await run.end(60_000);
    assert.equal(end.code, 0, end.stderr);
    const [session] = [...Deno.readDirSync(`${run.dir}/workdir`)];
    const got = await Deno.readFile(`${run.dir}/workdir/${session.name}/config.json`);
    assert.equal(got.length, 65_536);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(got)), exact);
  } finally {
    await run.close();
  }
  const over = await runToEnd({
    manifest: manifest(configOfBytes(65_537)),
    files,
    args: ["--task", "go"],
  });
  assert.equal(over.code, 1);
  assert.match(
    over.stderr,
    /error\[E-CAP-010\]: artifacts\[0\]\.config: is 65537 bytes as JSON; MURMUR_ARTIFACT_CONFIG holds at most 65536/,
  );
});
