/**
 * src/invocation.ts: which prefix a printed mur command line gets, and what its paths are
 * relative to, for each way mur can be invoked. hints_run_test.ts runs the lines for real.
 */
import assert from "node:assert/strict";
import {
  type InvocationFacts,
  invocationOf,
  pathFrom,
  shellWord,
  userPath,
} from "../../src/invocation.ts";

const ROOT = "/home/u/mur";
const NPX_BIN = "/root/.npm/_npx/7f/node_modules/.bin";

function facts(o: Partial<InvocationFacts> & { files?: string[] } = {}): InvocationFacts {
  const files = new Set(o.files ?? []);
  return {
    env: { PATH: "/usr/bin:/bin" },
    cwd: ROOT,
    execPath: "/root/.npm/_npx/7f/node_modules/deno/deno",
    standalone: false,
    root: ROOT,
    isExecutable: (p) => files.has(p),
    ...o,
  };
}

Deno.test("invocation: from the clone without deno on PATH, npx -y deno@2 task mur, paths from the root", () => {
  const inv = invocationOf(facts({ cwd: `${ROOT}/examples` }));
  assert.deepEqual(inv, { prefix: "npx -y deno@2 task mur", base: ROOT });
  assert.equal(pathFrom(inv, `${ROOT}/examples/hello/workdir`), "examples/hello/workdir");
  assert.equal(pathFrom(inv, "/tmp/wd/ses_1"), "/tmp/wd/ses_1");
  assert.equal(pathFrom(inv, `${ROOT}/ses_1`), "./ses_1", "a bare name would read as an address");
});

Deno.test("invocation: a deno npx put on PATH is not the user's; one in the user's PATH is", () => {
  const npxDeno = `${NPX_BIN}/deno`;
  const env = {
    PATH:
      `${NPX_BIN}:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/usr/bin`,
  };
  assert.deepEqual(userPath(env), ["/usr/bin"]);
  assert.equal(invocationOf(facts({ env, files: [npxDeno] })).prefix, "npx -y deno@2 task mur");
  const mine = facts({
    env: { PATH: `${NPX_BIN}:/home/u/.deno/bin:/usr/bin` },
    files: [npxDeno, "/home/u/.deno/bin/deno"],
  });
  assert.equal(invocationOf(mine).prefix, "deno task mur");
});

Deno.test("invocation: run from outside the clone, deno run -A with main.ts's absolute path", () => {
  const inv = invocationOf(facts({ cwd: "/home/u/caps", root: "/home/u/my mur" }));
  assert.deepEqual(inv, {
    prefix: "npx -y deno@2 run -A '/home/u/my mur/main.ts'",
    base: "/home/u/caps",
  });
  assert.equal(pathFrom(inv, "/home/u/caps/wd/ses_1"), "wd/ses_1");
  // A sibling folder whose name starts like the base is outside it.
  assert.equal(pathFrom(inv, "/home/u/caps2/wd"), "/home/u/caps2/wd");
});

Deno.test("invocation: MUR_COMMAND is the prefix verbatim; blank is as if unset", () => {
  const inv = invocationOf(
    facts({ env: { PATH: "/usr/bin", MUR_COMMAND: "mur" }, cwd: "/home/u/caps" }),
  );
  assert.deepEqual(inv, { prefix: "mur", base: "/home/u/caps" });
  assert.equal(
    invocationOf(facts({ env: { PATH: "/usr/bin", MUR_COMMAND: "/opt/x/mur --quiet" } })).prefix,
    "/opt/x/mur --quiet",
  );
  assert.equal(
    invocationOf(facts({ env: { PATH: "/usr/bin", MUR_COMMAND: "  " } })).prefix,
    "npx -y deno@2 task mur",
  );
});

Deno.test("invocation: a compiled binary is mur when PATH finds it, else its absolute path", () => {
  const bin = { standalone: true, execPath: "/usr/local/bin/mur", cwd: "/home/u" };
  assert.equal(
    invocationOf(
      facts({ ...bin, env: { PATH: "/usr/local/bin:/usr/bin" }, files: ["/usr/local/bin/mur"] }),
    )
      .prefix,
    "mur",
  );
  assert.equal(
    invocationOf(facts({ ...bin, env: { PATH: "/usr/bin" } })).prefix,
    "/usr/local/bin/mur",
  );
  // Another mur earlier on PATH: the one PATH finds is not this one.
  assert.equal(
    invocationOf(
      facts({
        ...bin,
        env: { PATH: "/opt/bin:/usr/local/bin" },
        files: ["/opt/bin/mur", "/usr/local/bin/mur"],
      }),
    )
      .prefix,
    "/usr/local/bin/mur",
  );
});

Deno.test("invocation: shellWord leaves plain words alone and quotes the rest so sh reads them back", async () => {
  const words = ["plain", "@1", "tsk_ab", "a b", "it's", "$HOME", "東京", "", "x;y", "*"];
  const line = words.map(shellWord).join(" ");
  const out = await new Deno.Command("sh", {
    args: ["-c", `for w in ${line}; do printf '%s\\n' "[$w]"; done`],
    env: { HOME: "/nowhere" },
    stdout: "piped",
  }).output();
  assert.deepEqual(
    new TextDecoder().decode(out.stdout).trimEnd().split("\n"),
    words.map((w) => `[${w}]`),
  );
  assert.equal(shellWord("examples/hello"), "examples/hello");
});
