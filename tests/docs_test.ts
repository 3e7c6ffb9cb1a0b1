/**
 * The docs a user's clone has (README "Guides"): every relative link in
 * README.md and docs/*.md names a file in the repository, and an anchor names a heading of that
 * file; nothing points at the specification folders outside it (`../shared/…`), which a
 * downloaded or cloned `mur` does not have; the README opens with what mur is for and the two
 * commands that set up a fresh machine.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;

async function docs(): Promise<string[]> {
  const out = ["README.md"];
  for await (const e of Deno.readDir(`${ROOT}docs`)) {
    if (e.isFile && e.name.endsWith(".md")) out.push(`docs/${e.name}`);
  }
  return out.sort();
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(md: string): Set<string> {
  const out = new Set<string>();
  for (const line of md.split("\n")) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    out.add(
      m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-"),
    );
  }
  return out;
}

function dirOf(path: string): string {
  return path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
}

/** `a/b/../c` → `a/c`. */
function normalise(path: string): string {
  const out: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "..") out.pop();
    else if (seg !== "." && seg !== "") out.push(seg);
  }
  return out.join("/");
}

Deno.test("docs: every relative link in README.md and docs/ resolves, anchors included", async () => {
  const broken: string[] = [];
  let anchored = 0;
  for (const file of await docs()) {
    const md = await Deno.readTextFile(ROOT + file);
    for (const m of md.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/i.test(target)) continue; // http:, mailto:
      const [path, anchor] = target.split("#");
      const resolved = path === "" ? file : normalise(dirOf(file) + path);
      let text: string | null = null;
      try {
        const st = await Deno.stat(ROOT + resolved);
        text = st.isFile ? await Deno.readTextFile(ROOT + resolved) : "";
      } catch {
        broken.push(`${file}: ${target} (no such file ${resolved})`);
        continue;
      }
      if (anchor && resolved.endsWith(".md")) anchored++;
      if (anchor && resolved.endsWith(".md") && !anchorsOf(text).has(anchor)) {
        broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(anchored >= 20, `only ${anchored} anchored links were checked`);
});

Deno.test("docs: nothing a user reads points outside the repository", async () => {
  const outside: string[] = [];
  for (const file of await docs()) {
    const lines = (await Deno.readTextFile(ROOT + file)).split("\n");
    lines.forEach((l, i) => {
      if (/\.\.\/shared\b|shared\/(seeds|spec|reference|notes)\b/.test(l)) {
        outside.push(`${file}:${i + 1}: ${l.trim()}`);
      }
    });
  }
  assert.deepEqual(outside, []);
});

Deno.test("docs: the README opens with what mur is for, then the two commands for a fresh machine", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const [title, ...rest] = readme.split("\n");
  assert.equal(title, "# mur");
  const body = rest.join("\n").trimStart();
  assert.match(body.split("\n\n")[0], /^`mur` runs AI agents/);
  const block = /```sh\n([\s\S]*?)```/.exec(body);
  assert.ok(block && block.index < 1200, "the first code block comes right after the opening");
  const commands = block![1].trim().split("\n").map((l) => l.replace(/\s+#.*$/, "").trim());
  assert.deepEqual(commands, ["npx -y deno@2 task demo", "npx -y deno@2 task test"]);
  // The demo is the scripted model, and the test task is the one .ci/run runs.
  const deno = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  assert.match(deno.tasks.demo, /scripts\/demo\.ts/);
  // .ci/run is the README's test command and nothing more: CI is red exactly when a user is.
  const ci = (await Deno.readTextFile(`${ROOT}.ci/run`)).split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#") && !/^(set|cd) /.test(l));
  assert.deepEqual(ci, ["npx -y deno@2 task test"]);
});

Deno.test("docs: the README is short (≤ 300 lines) and its guide table links every guide in docs/", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const lines = readme.trimEnd().split("\n").length;
  assert.ok(lines <= 300, `README.md has ${lines} lines`);
  const at = readme.indexOf("## Guides");
  assert.ok(at >= 0, "the README has its guide table");
  const table = readme.slice(at);
  const unlisted = (await docs()).filter((f) => f.startsWith("docs/"))
    .filter((f) => !table.includes(`](${f})`));
  assert.deepEqual(unlisted, []);
});

Deno.test("docs: the README and docs/developing.md name every program the test command installs", async () => {
  const { PROGRAMS } = await import("../scripts/test/programs.ts");
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const needs = readme.split("\n").find((l) => l.startsWith("| `npx -y deno@2 task test`"));
  assert.ok(needs, "the README's needs table has the test command's row");
  const developing = await Deno.readTextFile(`${ROOT}docs/developing.md`);
  for (const p of PROGRAMS) {
    assert.ok(needs.includes(`\`${p.bin}\``), `the README's row lacks ${p.bin}`);
    assert.ok(developing.includes(`\`${p.bin}\``), `docs/developing.md lacks ${p.bin}`);
    assert.ok(developing.includes(`\`${p.apt}\``), `docs/developing.md lacks package ${p.apt}`);
  }
});
