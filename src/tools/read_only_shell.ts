/**
 * Writes a shell call names: the redirections and the write-position arguments of the usual
 * file-changing commands (coreutils, sed -i, patch, dd), read from the tokens of the one shell
 * lexer (shell_words.ts). Best effort by design: docs/tools.md (`read_only`).
 */
import { posix } from "../paths.ts";
import { CAPSULE_HOME } from "./shell_env.ts";
import { lexShell } from "./shell_words.ts";

/** A path a call may write, and how it was identified. */
export interface Candidate {
  path: string;
  signal: string;
  /** The command also changes what lies below the path (`rm -r`, `mv`, `chmod -R`). */
  subtree: boolean;
  /** Directory the path is relative to (workdir-relative; a `cd` earlier in the script). */
  cwd: string;
}

/** `~` and `$HOME` are the capsule's shell home, `.capsule-home` in the workdir. */
export function expandHome(p: string): string {
  if (p === "~" || p.startsWith("~/")) return `${CAPSULE_HOME}${p.slice(1)}`;
  if (p === "$HOME" || p.startsWith("$HOME/")) return `${CAPSULE_HOME}${p.slice(5)}`;
  return p;
}

const REDIRECT = /^(\d*)(>>|>\||>&|>|&>>|&>)$/;

/** Every write candidate of a script line, in order; command substitutions last. */
export function scriptWrites(script: string): Candidate[] {
  const { tokens, substitutions } = lexShell(script, "script");
  const out: Candidate[] = [];
  let cwd = ".";
  let words: string[] = [];
  const endCommand = () => {
    if (words.length) {
      out.push(...commandWrites(words, cwd));
      // A plain `cd DIR` moves the rest of the script (best effort: `cd -` and `$VAR` are lost).
      if (words[0] === "cd" && words.length === 2 && !/[$`]/.test(words[1])) {
        const to = expandHome(words[1]);
        cwd = to.startsWith("/") ? to : posix.join(cwd, to);
      }
    }
    words = [];
  };
  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t];
    if ("word" in tok) {
      words.push(tok.word);
      continue;
    }
    const m = REDIRECT.exec(tok.op);
    if (m) {
      const next = tokens[t + 1];
      if (next && "word" in next) {
        t++;
        const dup = m[2] === ">&" && /^(\d+|-)$/.test(next.word);
        if (!dup) {
          out.push({ path: next.word, signal: `redirection ${tok.op}`, subtree: false, cwd });
        }
      }
      continue;
    }
    if (/^\d*(<|<<|<<-|<<<|<&|<>)$/.test(tok.op)) {
      // Input redirections read; `<>` opens for writing too. Here-doc delimiters are words.
      const next = tokens[t + 1];
      if (next && "word" in next) {
        t++;
        if (tok.op.endsWith("<>")) {
          out.push({ path: next.word, signal: `redirection ${tok.op}`, subtree: false, cwd });
        }
      }
      continue;
    }
    endCommand();
  }
  endCommand();
  for (const body of substitutions) out.push(...scriptWrites(body));
  return out;
}

// ───────────────────────────── one command's arguments ─────────────────────────────

/** Prefix commands that run the rest of their arguments as a command. */
const WRAPPERS = new Set([
  "sudo",
  "env",
  "nohup",
  "time",
  "exec",
  "command",
  "builtin",
  "nice",
  "xargs",
  "stdbuf",
]);

/** Options whose value is the next argument (not a path the command writes). */
const VALUE_OPTS: Record<string, string[]> = {
  truncate: ["-s", "-r", "--size", "--reference"],
  touch: ["-d", "-t", "-r", "--date", "--reference"],
  mkdir: ["-m", "--mode", "-Z"],
  cp: ["-S", "--suffix"],
  mv: ["-S", "--suffix"],
  ln: ["-S", "--suffix"],
  install: ["-m", "-o", "-g", "-S", "--mode", "--owner", "--group", "--suffix"],
  shred: ["-n", "-s", "--iterations", "--size", "--random-source"],
  patch: ["-p", "-i", "-d", "-F", "-B", "-z", "-V", "-D", "-r", "--input", "--directory"],
  sed: ["-e", "-f", "-l", "--expression", "--file", "--line-length"],
};

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

/** Positional arguments and option values of `args` for `cmd`. */
function parseArgs(
  cmd: string,
  args: string[],
): { pos: string[]; opts: [string, string | null][] } {
  const takes = VALUE_OPTS[cmd] ?? [];
  const pos: string[] = [];
  const opts: [string, string | null][] = [];
  let rest = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (rest || a === "-" || !a.startsWith("-")) {
      pos.push(a);
      continue;
    }
    if (a === "--") {
      rest = true;
      continue;
    }
    const eq = a.indexOf("=");
    if (a.startsWith("--") && eq > 0) opts.push([a.slice(0, eq), a.slice(eq + 1)]);
    else if (
      takes.includes(a) ||
      (cmd === "cp" || cmd === "mv" || cmd === "ln" || cmd === "install") && a === "-t"
    ) {
      opts.push([a, args[i + 1] ?? null]);
      i++;
    } else opts.push([a, null]);
  }
  return { pos, opts };
}

/** Write candidates of one simple command (`words[0]` is the program). */
export function commandWrites(words: string[], cwd: string): Candidate[] {
  let w = words;
  // Leading assignments (`FOO=1 rm x`) and wrappers (`sudo rm x`, `env A=1 rm x`).
  for (;;) {
    while (w.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0])) w = w.slice(1);
    if (!w.length || !WRAPPERS.has(basename(w[0]))) break;
    w = w.slice(1);
    while (w.length && w[0].startsWith("-")) w = w.slice(1);
  }
  if (!w.length) return [];
  const cmd = basename(w[0]);
  const args = w.slice(1);
  const hit = (path: string, subtree = false): Candidate => ({
    path,
    signal: `${cmd} argument`,
    subtree,
    cwd,
  });
  const { pos, opts } = parseArgs(cmd, args);
  const optVal = (...names: string[]) =>
    opts.filter(([k, v]) => names.includes(k) && v !== null).map(([, v]) => v!);
  switch (cmd) {
    case "rm":
      return pos.map((p) => hit(p, true));
    case "tee":
    case "rmdir":
    case "unlink":
    case "shred":
    case "truncate":
    case "mkdir":
    case "touch":
      return pos.map((p) => hit(p));
    case "chmod":
    case "chown": {
      const byRef = opts.some(([k]) => k === "--reference");
      return (byRef ? pos : pos.slice(1)).map((p) => hit(p, true));
    }
    case "mv":
      return [...optVal("-t", "--target-directory"), ...pos].map((p) => hit(p, true));
    case "cp":
    case "install":
    case "ln": {
      const dirs = optVal("-t", "--target-directory");
      if (dirs.length) return dirs.map((p) => hit(p));
      if (cmd === "install" && opts.some(([k]) => k === "-d" || k === "--directory")) {
        return pos.map((p) => hit(p));
      }
      if (pos.length >= 2) return [hit(pos[pos.length - 1])];
      if (cmd === "ln" && pos.length === 1) return [hit(basename(pos[0]))];
      return [];
    }
    case "patch": {
      const out = optVal("-o", "--output");
      return [...out, ...pos.slice(0, 1)].map((p) => hit(p));
    }
    case "sed": {
      const inPlace = opts.some(([k]) => k === "--in-place" || /^-[^-]*i/.test(k));
      if (!inPlace) return [];
      const scripted = opts.some(([k]) => ["-e", "-f", "--expression", "--file"].includes(k));
      return (scripted ? pos : pos.slice(1)).map((p) => ({ ...hit(p), signal: "sed -i argument" }));
    }
    case "dd":
      return args.filter((a) => a.startsWith("of=")).map((a) => ({
        ...hit(a.slice(3)),
        signal: "dd of=",
      }));
    default:
      return [];
  }
}
