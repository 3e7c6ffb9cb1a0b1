/**
 * On a real authenticated door, the E-IO-004 hint fits what was wrong with the token
 * (src/watch/refusal_hint.ts): none given, one the door does not know (401: the hint is about the
 * token, not a scope), or a known one without the method's scope (403). `mur run -v` on such a
 * door says where its tokens are without printing them.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { runMur, tempHome } from "./helpers.ts";

const QUICK = { tasks: [{ turns: [{ steps: [{ text: "done" }] }] }] };
const AUTH = {
  authentication: {
    scheme: "bearer",
    credentials: { watcher: { scopes: ["GetTask", "murmur.WatchSession"] } },
  },
};

Deno.test("a wrong token's hint is about the token; a token without the scope is told the scope; none is told a token is needed", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "tokens",
      version: "1",
      network: AUTH,
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: QUICK,
  });
  const home = await tempHome();
  try {
    const tokens = (cap.ready as unknown as { tokens: Record<string, string> }).tokens;
    const url = cap.ready.url;
    const env = (token?: string): Record<string, string> =>
      token ? { MURMUR_HOME: home, MURMUR_DOOR_TOKEN: token } : { MURMUR_HOME: home };
    const hint = (stderr: string) => /\n {2}hint: (.*)/.exec(stderr)?.[1] ?? "";

    const wrong = await runMur(["watch", "--url", url], env(`${tokens.watcher}x`));
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, /^error\[E-IO-004\]: .*HTTP 401/);
    assert.match(
      hint(wrong.stderr),
      /^the door does not know the token presented: it was not minted by this session \(mistyped, or another session's\); set MURMUR_DOOR_TOKEN to one of this session's tokens \(a session's tokens are in its running record under /,
    );
    assert.doesNotMatch(hint(wrong.stderr), /scope/);

    const cancelWrong = await runMur([
      "cancel",
      "--url",
      url,
      "tsk_01a2b3c4d5e6f708a9b0c1d2e3f4a5b6",
    ], env("mdt1.nonsense"));
    assert.equal(cancelWrong.code, 1, cancelWrong.stderr);
    assert.match(hint(cancelWrong.stderr), /^the door does not know the token presented/);

    // The watcher's token is known, but CancelTask is not among its scopes: 403, about the scope.
    const scoped = await runMur(
      ["cancel", "--url", url, "tsk_01a2b3c4d5e6f708a9b0c1d2e3f4a5b6"],
      env(tokens.watcher),
    );
    assert.equal(scoped.code, 1, scoped.stderr);
    assert.match(scoped.stderr, /^error\[E-IO-004\]: .*HTTP 403/);
    assert.match(
      hint(scoped.stderr),
      /^the token presented does not hold the CancelTask scope; set MURMUR_DOOR_TOKEN to one that does/,
    );

    const none = await runMur(["watch", "--url", url], env());
    assert.equal(none.code, 1, none.stderr);
    assert.match(
      hint(none.stderr),
      /^this door requires a token: set MURMUR_DOOR_TOKEN to one holding the murmur\.WatchSession scope/,
    );
  } finally {
    await cap.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("mur run -v on an authenticated door names its credentials and where their tokens are, not the tokens", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-tokens-v-" });
  try {
    await Deno.writeTextFile(
      `${dir}/murmur.yaml`,
      JSON.stringify({
        name: "tokens",
        version: "1",
        inference: { driver: "scripted", script: "script.yaml" },
        network: AUTH,
      }),
    );
    await Deno.writeTextFile(`${dir}/script.yaml`, JSON.stringify(QUICK));
    const r = await runMur(["run", "--manifest", dir, "--task", "x", "-v"], {
      MURMUR_HOME: `${dir}/home`,
    });
    assert.equal(r.code, 0, r.stderr);
    const sid = /^session: (ses_\w+)$/m.exec(r.stdout)?.[1];
    assert.ok(sid, r.stdout);
    const line = r.stdout.split("\n").find((l) => l.startsWith("tokens: "));
    assert.equal(
      line,
      `tokens: operator, watcher (in ${dir}/home/running/${sid}.json; mur run --json prints them)`,
    );
    assert.doesNotMatch(r.stdout, /mdt1\./, "no token is printed");
    // A public door has no tokens line.
    await Deno.writeTextFile(
      `${dir}/murmur.yaml`,
      JSON.stringify({
        name: "t",
        version: "1",
        inference: { driver: "scripted", script: "script.yaml" },
      }),
    );
    const open = await runMur(["run", "--manifest", dir, "--task", "x", "-v"], {
      MURMUR_HOME: `${dir}/home`,
    });
    assert.equal(open.code, 0, open.stderr);
    assert.doesNotMatch(open.stdout, /^tokens:/m);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
