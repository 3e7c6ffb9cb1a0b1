/**
 * The hostile model (docs/containment.md "What each class enforces"): a scripted model tries every
 * escape of ./escapes.ts through the bash tool, and the other kinds of process (a command tool, a
 * detached shell, an async hook, an on-stage hook, the done_check) try to write outside the scope
 * and read the operator's key. At `scoped` and `sealed` each attempt a class promises to stop is
 * stopped, the model reads the operating system's refusal, and the session goes on to its end;
 * at `advisory` the same suite documents what is not stopped (the attempts that would harm the
 * machine running the test are not made there: escapes.ts `unsafeAt`).
 *
 * As root (CI) the suite runs twice: as root, and as the unprivileged uid 65534, as users run mur.
 * A host without bubblewrap or user namespaces skips the contained classes, saying why.
 */
import assert from "node:assert/strict";
import { type ContainmentClass, rank } from "../../src/containment/classes.ts";
import { probeHost } from "../../src/containment/probe.ts";
import { ESCAPES } from "./escapes.ts";
import { canRunAsNobody } from "../helpers/as_nobody.ts";
import { type HostileRun, OTHER_SECRET, runHostile, SSH_SECRET } from "./hostile_capsule.ts";

const host = await probeHost((n) => Deno.env.get(n));
const canSetpriv = await canRunAsNobody();

function check(run: HostileRun, cls: ContainmentClass): void {
  const why = `status ${run.status}\n${run.stderr.slice(-2000)}\n${run.peakTasks}`;
  assert.equal(run.status, "ok", why);
  assert.ok(run.finished, `the model did not reach its last turn\n${why}`);
  assert.equal(run.achieved, cls);
  assert.equal(run.declared, cls);
  for (const e of ESCAPES) {
    if (!run.tried.includes(e.id)) continue;
    const text = run.results.get(e.id);
    assert.ok(text !== undefined, `${e.id}: no tool result`);
    // What the command printed, without the command line echoed above it; the whole result when
    // it has no exit code (moved to the background, or the tool failed).
    const at = text.indexOf("\nExit code:");
    const out = at >= 0 ? text.slice(at) : `(no exit code in the result)\n${text}`;
    if (rank(cls) >= rank(e.stoppedAt)) {
      assert.ok(!out.includes("ESCAPED"), `${e.id} got through at ${cls}:\n${out}`);
      assert.match(
        out,
        e.refusal,
        `${e.id} at ${cls}: the model did not read a clear refusal:\n${out}\n${run.peakTasks}`,
      );
    } else if (cls === "advisory") {
      // advisory's gaps, written down by the test (scoped does not promise what only sealed
      // stops, and may or may not stop it: a user namespace as root, say).
      assert.ok(out.includes("ESCAPED"), `${e.id} was expected to get through at ${cls}:\n${out}`);
    }
  }
  for (const secret of [SSH_SECRET, OTHER_SECRET]) {
    const leaked = [...run.results].filter(([, text]) => text.includes(secret)).map(([id]) => id);
    if (cls === "advisory") continue;
    assert.deepEqual(leaked, [], `${secret} reached the model at ${cls}`);
  }
}

function checkProcessKinds(run: HostileRun, cls: ContainmentClass): void {
  const kinds = ["command-tool", "detached-shell", "done-check", "hook", "on-stage-hook"];
  if (cls === "advisory") {
    // Not stopped at advisory: every kind of process writes outside and reads the key.
    assert.deepEqual(run.outside.filter((f) => kinds.includes(f)), kinds);
    assert.ok(run.hookSaw.includes(SSH_SECRET));
    assert.match(run.results.get("peek") ?? "", new RegExp(SSH_SECRET));
    assert.match(run.results.get("connect-allowed") ?? "", /REACHED/);
    return;
  }
  assert.deepEqual(run.outside, [], `written outside the scope at ${cls}`);
  assert.equal(run.protectedText, "PROTECTED-ORIGINAL");
  assert.ok(!run.hookSaw.includes(SSH_SECRET), `the hook read the key at ${cls}`);
  assert.match(
    run.hookSaw,
    /No such file or directory/,
    `what the hook wrote: ${JSON.stringify(run.hookSaw)}\n${run.stderr.slice(-1500)}\n` +
      `${run.hookLogs}\n${run.peakTasks}`,
  );
  const peek = run.results.get("peek") ?? "";
  assert.ok(!peek.includes(SSH_SECRET), peek);
  assert.match(peek, /No such file or directory/);
  assert.match(peek, /Read-only file system/);
  assert.match(run.results.get("wait-detached") ?? "", /Stdout:\ndetached\.done/);
  // network.allow: the allowed loopback port is reached under scoped; sealed has no network.
  const allowed = run.results.get("connect-allowed") ?? "";
  if (cls === "scoped") assert.match(allowed, /REACHED/);
  else assert.match(allowed, /Network is unreachable|Connection refused|Cannot assign/);
}

const users: ("self" | "nobody")[] = canSetpriv ? ["self", "nobody"] : ["self"];
for (const as of users) {
  for (const cls of ["sealed", "scoped", "advisory"] as const) {
    const reachable = rank(host.reach) >= rank(cls);
    Deno.test({
      name: `hostile model at ${cls}, mur as ${as === "self" ? `uid ${Deno.uid()}` : "uid 65534"}${
        reachable ? "" : ` (skipped: this host reaches ${host.reach}: ${host.reason})`
      }`,
      ignore: !reachable,
      sanitizeResources: false,
      sanitizeOps: false,
      fn: async () => {
        const run = await runHostile(cls, as);
        check(run, cls);
        checkProcessKinds(run, cls);
      },
    });
  }
}
