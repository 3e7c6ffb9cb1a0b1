/**
 * Docs that run as printed: every command line a reader is told to type, in README.md, docs/ and
 * the examples' comments, starts with something the README's route provides — `mur` (the
 * installed shim), `npx -y deno@2 …` (Node's npx; no `deno` is ever put on PATH), or a common
 * shell program. A bare `deno task …` fails on such a machine with "command not found".
 *
 * Command lines are: the lines of a `sh` block (not its comments, the continuations of a line
 * ending in `\`, or a script that starts with `#!`); in the examples, a comment line indented
 * under its `#` (`#   mur run …`), with each `(or: …)` alternative; and in prose, a code span
 * starting with `deno` that carries arguments (a path, a placeholder, quotes), as
 * `deno run -A scripts/fakes/main.ts …` did. A span that only names a task or one of Deno's own
 * tools (`deno task bench` measures…, `deno compile` cannot download…) is not a command line, nor
 * is a table cell that describes how mur was started (docs/running.md "Command lines mur prints").
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;

/** What a reader on the README's route has: mur, npx, a POSIX shell and its usual programs. */
const PROVIDED = new Set([
  "mur",
  "npx",
  // the shell and its usual programs
  ...["cd", "export", "set", "unset", "echo", "printf", "cat", "ls", "mkdir", "rm", "cp", "mv"],
  ...["touch", "chmod", "kill", "sleep", "test", "wait", "trap", "exec", "env", "tee", "wc"],
  ...["grep", "sed", "awk", "head", "tail", "sort", "uniq", "cut", "tr", "xargs", "find"],
  ...["less", "jq", "curl", "git", "openssl", "tar", "sh", "bash", "ssh"],
  // the other programs the guides run beside mur (docs/edge.md, docs/kubernetes.md, …)
  ...["redis-server", "redis-cli", "redis-sentinel", "kubectl", "docker", "ollama", "tmux"],
]);

/** The program a command line runs: leading `NAME=value` assignments and `$ ` prompts skipped. */
export function programOf(line: string): string | null {
  let rest = line.trim().replace(/^\$\s+/, "");
  // A line that only assigns (`T=<a task id>`) runs nothing.
  if (/^[A-Za-z_]\w*=(<[^>]*>|'[^']*'|"[^"]*"|\S*)\s*(#.*)?$/.test(rest)) return null;
  for (;;) {
    const m = /^[A-Za-z_]\w*=(<[^>]*>|'[^']*'|"[^"]*"|\S*)\s+/.exec(rest);
    if (!m) break;
    rest = rest.slice(m[0].length);
  }
  const word = /^[^\s;&|()]+/.exec(rest)?.[0];
  return word ?? null;
}

/** The quote (`'` or `"`) a shell line leaves open, given the one open before it. */
function openQuote(line: string, open: string | null): string | null {
  let q = open;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (q === null && c === "#" && (i === 0 || /\s/.test(line[i - 1]))) break; // a comment
    if (c === "\\" && q !== "'") i++;
    else if (q === null && (c === "'" || c === '"')) q = c;
    else if (c === q) q = null;
  }
  return q;
}

/** Lines of the `sh` blocks of a Markdown text, each with its line number. */
export function shellLines(md: string): { n: number; line: string }[] {
  const out: { n: number; line: string }[] = [];
  const lines = md.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell|console)\s*$/.test(lines[i])) continue;
    const body: { n: number; line: string }[] = [];
    for (i++; i < lines.length && !lines[i].startsWith("```"); i++) {
      body.push({ n: i + 1, line: lines[i] });
    }
    if (body[0]?.line.startsWith("#!")) continue; // a script's text, not lines to type
    let continued = false;
    let quote: string | null = null; // a quoted string still open at the line's end
    for (const b of body) {
      const t = b.line.trim();
      const skip = continued || quote !== null || t === "" || t.startsWith("#");
      quote = openQuote(b.line, quote);
      continued = quote === null && t.endsWith("\\");
      if (!skip) out.push(b);
    }
  }
  return out;
}

/** Command lines in an example's comments: `#` then two or more spaces, with `(or: …)` parts. */
export function commentCommands(text: string): { n: number; line: string }[] {
  const out: { n: number; line: string }[] = [];
  let continued = false;
  text.split("\n").forEach((raw, i) => {
    const m = /^\s*#( {2,})(\S.*)$/.exec(raw);
    if (!m) {
      continued = false;
      return;
    }
    const t = m[2].trim();
    if (!continued) {
      const [first, ...alts] = t.split(/\(or:\s*/);
      out.push({ n: i + 1, line: first });
      for (const a of alts) out.push({ n: i + 1, line: a.replace(/\)\s*$/, "") });
    }
    continued = t.endsWith("\\");
  });
  return out;
}

/** Prose code spans that are `deno` command lines with arguments (not names of a task or tool). */
export function denoSpans(md: string): { n: number; line: string }[] {
  const out: { n: number; line: string }[] = [];
  let fence = false;
  md.split("\n").forEach((line, i) => {
    if (line.startsWith("```")) fence = !fence;
    if (fence || line.startsWith("|")) return;
    for (const m of line.matchAll(/`(deno [^`]+)`/g)) {
      const args = m[1].split(/\s+/).slice(2);
      if (args.some((a) => /[/…[\]"'<]|\.ts$/.test(a))) out.push({ n: i + 1, line: m[1] });
    }
  });
  return out;
}

async function files(dir: string, ext: RegExp, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(`${ROOT}${dir}`)) {
    if (e.name.startsWith(".") || e.name === "workdir" || e.name === "node_modules") continue;
    if (e.isDirectory) await files(`${dir}${e.name}/`, ext, out);
    else if (ext.test(e.name)) out.push(`${dir}${e.name}`);
  }
  return out.sort();
}

Deno.test("docs: every command line in README.md, docs/ and the examples' comments starts with mur, npx -y deno@2 or a common shell program", async () => {
  const wrong: string[] = [];
  let seen = 0;
  const check = (file: string, found: { n: number; line: string }[]) => {
    for (const { n, line } of found) {
      seen++;
      const program = programOf(line);
      if (program === null) continue;
      const viaNpx = program !== "npx" || /^(\S+=\S+\s+)*npx -y deno@2\b/.test(line.trim()) ||
        !/\bdeno\b/.test(line);
      if (!PROVIDED.has(program) || !viaNpx) wrong.push(`${file}:${n}: ${line.trim()}`);
    }
  };
  for (const f of ["README.md", ...(await files("docs/", /\.md$/))]) {
    const text = await Deno.readTextFile(`${ROOT}${f}`);
    check(f, shellLines(text));
    check(f, denoSpans(text));
  }
  for (const f of await files("examples/", /\.(ya?ml|md|sh)$/)) {
    check(f, commentCommands(await Deno.readTextFile(`${ROOT}${f}`)));
  }
  assert.ok(seen > 30, `only ${seen} command lines found`);
  assert.deepEqual(wrong, []);
});

Deno.test("docs: the command-line finders catch a bare deno where a reader would type it", () => {
  const fence = "```";
  assert.deepEqual(
    shellLines(
      `${fence}sh\nmur watch   # follow\n# a comment\nFOO=1 deno task demo \\\n  --x\n${fence}\n`,
    ).map((l) => programOf(l.line)),
    ["mur", "deno"],
  );
  assert.deepEqual(shellLines(`${fence}sh\n#!/bin/sh\nin=$(cat)\n${fence}\n`), []);
  assert.deepEqual(
    shellLines(`${fence}sh\ncurl -d '{\n  "a": 1 }'\nmur ps\n${fence}\n`).map((l) => l.line),
    ["curl -d '{", "mur ps"],
  );
  assert.deepEqual(
    commentCommands("# Run it with:\n#   deno task demo:crew   (or: mur run --roster r.yaml)\n")
      .map((l) => programOf(l.line)),
    ["deno", "mur"],
  );
  assert.deepEqual(
    denoSpans("start `deno run -A scripts/fakes/main.ts …`; `deno task bench` measures\n")
      .map((l) => l.line),
    ["deno run -A scripts/fakes/main.ts …"],
  );
  assert.equal(programOf("T=<a task id>"), null);
  assert.equal(programOf("ANTHROPIC_API_KEY=sk-ant-… mur run --manifest x"), "mur");
});
