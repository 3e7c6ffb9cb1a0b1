import assert from "node:assert/strict";
import { ReadOnlyGuard } from "../../src/tools/read_only.ts";

const WD = "/srv/capsule/wd";
const guard = new ReadOnlyGuard(["docs", "data/frozen"], WD);

function shell(line: string) {
  return guard.checkShell("bash", line, true);
}

Deno.test("read_only: shell redirections into a read-only subtree are writes", () => {
  for (
    const [line, path, signal] of [
      ["echo x > docs/a.md", "docs/a.md", "redirection >"],
      ["echo x >> docs/a.md", "docs/a.md", "redirection >>"],
      ["echo x >| docs/a.md", "docs/a.md", "redirection >|"],
      ["make &> docs/log", "docs/log", "redirection &>"],
      ["make &>> docs/log", "docs/log", "redirection &>>"],
      ["cmd 2> docs/err", "docs/err", "redirection 2>"],
      ["cmd 2>>docs/err", "docs/err", "redirection 2>>"],
      ["echo x>docs/a", "docs/a", "redirection >"],
      ["true && echo x > ./docs/../docs/b", "./docs/../docs/b", "redirection >"],
      [`echo x > "${WD}/docs/abs"`, `${WD}/docs/abs`, "redirection >"],
      ["echo x > 'data/frozen/q'", "data/frozen/q", "redirection >"],
    ] as const
  ) {
    const hit = shell(line);
    assert.ok(hit, line);
    assert.equal(hit.path, path, line);
    assert.equal(hit.signal, signal, line);
  }
  assert.equal(shell("echo x > docs/a.md")?.rule, "docs");
  assert.equal(shell("echo x > data/frozen/q")?.rule, "data/frozen");
});

Deno.test("read_only: reads, other paths and fd duplications are not writes", () => {
  for (
    const line of [
      "cat docs/a.md",
      "cat < docs/a.md",
      "grep -r x docs > out.txt",
      "echo x > docs2/a",
      "echo x > data/other",
      "cmd 2>&1 | tee out.log",
      "echo x >&2",
      "echo x > /tmp/elsewhere",
      "echo 'echo x > docs/a'",
      "cp docs/a.md backup/",
      "sed -e s/a/b/ docs/a.md",
      "# echo x > docs/a",
      "cat <<EOF\necho x > docs/a\nEOF\necho fine",
    ]
  ) {
    assert.equal(shell(line), null, line);
  }
});

Deno.test("read_only: write-position arguments of file-changing commands", () => {
  const cases: [string, string, string][] = [
    ["rm -rf docs/old", "docs/old", "rm argument"],
    ["rm -rf .", ".", "rm argument"],
    ["rm -r data", "data", "rm argument"],
    ["touch docs/new", "docs/new", "touch argument"],
    ["mkdir -p docs/x/y", "docs/x/y", "mkdir argument"],
    ["rmdir docs/x", "docs/x", "rmdir argument"],
    ["unlink docs/x", "docs/x", "unlink argument"],
    ["shred docs/x", "docs/x", "shred argument"],
    ["truncate -s 0 docs/x", "docs/x", "truncate argument"],
    ["chmod 644 docs/x", "docs/x", "chmod argument"],
    ["chown -R me docs", "docs", "chown argument"],
    ["cp a.md docs/", "docs/", "cp argument"],
    ["cp -t docs a b", "docs", "cp argument"],
    ["install -m 644 a docs/a", "docs/a", "install argument"],
    ["ln -s ../a docs/link", "docs/link", "ln argument"],
    ["mv docs/a.md b.md", "docs/a.md", "mv argument"],
    ["mv a.md docs/", "docs/", "mv argument"],
    ["patch docs/a.md fix.diff", "docs/a.md", "patch argument"],
    ["sed -i s/a/b/ docs/a.md", "docs/a.md", "sed -i argument"],
    ["sed -i.bak -e s/a/b/ docs/a.md", "docs/a.md", "sed -i argument"],
    ["dd if=/dev/zero of=docs/z bs=1 count=1", "docs/z", "dd of="],
    ["echo x | tee -a docs/log", "docs/log", "tee argument"],
    ["sudo rm docs/a", "docs/a", "rm argument"],
    ["FOO=1 env BAR=2 touch docs/a", "docs/a", "touch argument"],
    ["/bin/rm docs/a", "docs/a", "rm argument"],
    ["cd docs && touch a", "a", "touch argument"],
    ["rm do*", "do*", "rm argument"],
    ["x=$(touch docs/sub)", "docs/sub", "touch argument"],
    ["echo `rm docs/a`", "docs/a", "rm argument"],
  ];
  for (const [line, path, signal] of cases) {
    const hit = shell(line);
    assert.ok(hit, line);
    assert.equal(hit.path, path, line);
    assert.equal(hit.signal, signal, line);
  }
  // An ancestor counts only for commands that change a whole subtree.
  assert.equal(shell("touch ."), null);
  assert.equal(shell("mkdir data"), null);
  assert.equal(shell("cp docs/a.md out/"), null);
  assert.equal(shell("sed s/a/b/ docs/a.md"), null);
  assert.equal(shell("cd docs && cat a"), null);
  assert.equal(shell("cd elsewhere && touch docs"), null);
});

Deno.test("read_only: a non-interpreter's args are checked against its own name, no redirections", () => {
  assert.equal(guard.checkShell("rm", "-f docs/a", false)?.path, "docs/a");
  assert.equal(guard.checkShell("touch", "'docs/with space'", false)?.path, "docs/with space");
  // No shell runs: '>' is a literal argument of echo, not a redirection.
  assert.equal(guard.checkShell("echo", "x > docs/a", false), null);
  assert.equal(guard.checkShell("git", "commit -am docs", false), null);
});

Deno.test("read_only: tool inputs naming a destination", () => {
  const schema = {};
  const check = (input: Record<string, unknown>, s: Record<string, unknown> = schema) =>
    guard.checkInput(input, s);
  assert.equal(check({ dest: "docs/a" })?.signal, "input key dest");
  assert.equal(check({ "Output-Path": "docs/a" })?.path, "docs/a");
  assert.equal(check({ to: ["ok/a", "docs/b"] })?.path, "docs/b");
  assert.equal(check({ file_path: "docs/a", content: "x" })?.path, "docs/a");
  assert.equal(check({ filePath: "docs/a", new_string: "x" })?.path, "docs/a");
  assert.equal(check({ edits: [{ path: "docs/a", diff: "…" }] })?.path, "docs/a");
  // A path with no content beside it is a read.
  assert.equal(check({ path: "docs/a" }), null);
  assert.equal(check({ file: "docs/a", mode: "r" }), null);
  assert.equal(check({ dest: "out/a" }), null);
  // Schema annotations.
  assert.equal(
    check({ where: "docs/a" }, {
      properties: { where: { type: "string", format: "murmur-destination" } },
    })?.path,
    "docs/a",
  );
  assert.equal(
    check({ dest: "docs/a" }, {
      properties: { dest: { type: "string", format: "murmur-opaque" } },
    }),
    null,
  );
  assert.equal(
    check({ repo_path: "data/frozen" }, { "murmur-destinations": ["{repo_path}/.murmur"] })?.path,
    "data/frozen/.murmur",
  );
  assert.equal(check({}, { "murmur-destinations": ["{repo_path}/.murmur"] }), null);
});

Deno.test("read_only: no rules, no refusals", () => {
  const open = new ReadOnlyGuard([], WD);
  assert.equal(open.checkShell("bash", "rm -rf /", true), null);
  assert.equal(open.checkInput({ dest: "docs" }, {}), null);
});
