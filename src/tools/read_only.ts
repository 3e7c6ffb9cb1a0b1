/**
 * `capabilities.filesystem.read_only` (reference §1.7): calls identified as writes into a
 * read-only subtree are refused before they run. Detection reads the call, it does not sandbox
 * it: shell redirections and the write-position arguments of the usual file-changing commands,
 * and, for other tools, input keys that name a destination. It errs on the side of refusing a
 * command that plainly writes there; it cannot see writes a program decides on by itself.
 */
import { posix } from "node:path";
import { CAPSULE_HOME } from "./shell.ts";
import { ShellWordsError, splitShellWords } from "./shell_words.ts";

export interface WriteHit {
  /** The path as the call wrote it. */
  path: string;
  /** The read-only entry it falls under. */
  rule: string;
  /** What identified the write: `redirection >`, `rm argument`, `input key dest`. */
  signal: string;
}

interface Candidate {
  path: string;
  signal: string;
  /** The command also changes what lies below the path (`rm -r`, `mv`, `chmod -R`). */
  subtree: boolean;
  /** Directory the path is relative to (workdir-relative; a `cd` earlier in the script). */
  cwd: string;
}

export class ReadOnlyGuard {
  readonly rules: string[];

  /** `rules`: workdir-relative subtrees, as the manifest loader normalised them. */
  constructor(rules: string[], readonly workdir: string) {
    this.rules = rules.map((r) => posix.normalize(r).replace(/\/+$/, "") || ".");
  }

  get active(): boolean {
    return this.rules.length > 0;
  }

  /**
   * The first write into a read-only subtree a shell call makes. `interpreter`: the command is
   * a script line for `<binary> -c`; else `command` holds args for `binary` only.
   */
  checkShell(binary: string, command: string, interpreter: boolean): WriteHit | null {
    if (!this.active) return null;
    let cands: Candidate[];
    if (interpreter) cands = scriptWrites(command);
    else {
      let args: string[];
      try {
        args = splitShellWords(command);
      } catch (e) {
        if (e instanceof ShellWordsError) return null; // the tool refuses it on its own
        throw e;
      }
      cands = commandWrites([binary, ...args], ".");
    }
    return this.#first(cands);
  }

  /** The first input field of a (non-shell) tool call that names a destination in read-only. */
  checkInput(input: Record<string, unknown>, schema: Record<string, unknown>): WriteHit | null {
    if (!this.active) return null;
    return this.#first(inputWrites(input, schema));
  }

  /** The read-only entry `path` (relative to `cwd`) falls under, or null. */
  ruleFor(path: string, cwd = ".", subtree = false): string | null {
    const rel = this.#relative(path, cwd);
    if (rel === null) return null;
    for (const rule of this.rules) {
      if (covers(rule, rel, subtree)) return rule;
    }
    return null;
  }

  #first(cands: Candidate[]): WriteHit | null {
    for (const c of cands) {
      const rule = this.ruleFor(c.path, c.cwd, c.subtree);
      if (rule !== null) return { path: c.path, rule, signal: c.signal };
    }
    return null;
  }

  /** `path` relative to the workdir, normalised; null when it lies outside. */
  #relative(path: string, cwd: string): string | null {
    if (path === "") return null;
    let p = expandHome(path);
    if (!p.startsWith("/")) p = posix.join(expandHome(cwd), p);
    if (p.startsWith("/")) {
      const root = posix.normalize(this.workdir).replace(/\/+$/, "");
      const norm = posix.normalize(p);
      if (norm === root) return ".";
      if (!norm.startsWith(`${root}/`)) return null;
      p = norm.slice(root.length + 1);
    }
    const rel = posix.normalize(p).replace(/\/+$/, "") || ".";
    if (rel === ".." || rel.startsWith("../")) return null;
    return rel;
  }
}

/** `~` and `$HOME` are the capsule's shell home, `.capsule-home` in the workdir. */
function expandHome(p: string): string {
  if (p === "~" || p.startsWith("~/")) return `${CAPSULE_HOME}${p.slice(1)}`;
  if (p === "$HOME" || p.startsWith("$HOME/")) return `${CAPSULE_HOME}${p.slice(5)}`;
  return p;
}

/**
 * Whether a write to `rel` reaches into `rule`: `rel` is the rule or inside it, or (for a
 * command that changes a whole subtree) an ancestor of it. Glob characters in `rel` match
 * component-wise, so `rm do*` reaches `docs`.
 */
function covers(rule: string, rel: string, subtree: boolean): boolean {
  if (rule === ".") return true;
  const r = rule.split("/");
  const p = rel === "." ? [] : rel.split("/");
  const n = Math.min(r.length, p.length);
  for (let i = 0; i < n; i++) if (!componentMatches(p[i], r[i])) return false;
  if (p.length >= r.length) return true;
  return subtree;
}

function componentMatches(pattern: string, name: string): boolean {
  if (!/[*?[]/.test(pattern)) return pattern === name;
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        re += `[${pattern.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  try {
    return new RegExp(`^${re}$`).test(name);
  } catch {
    return false;
  }
}

// ───────────────────────────── shell scripts ─────────────────────────────

type Token = { word: string } | { op: string };

const REDIRECT = /^(\d*)(>>|>\||>&|>|&>>|&>)$/;

/**
 * Tokenises a script line: words with quotes removed (no expansion), operators (`;`, `&&`, `|`,
 * newlines, parentheses) and redirections as their own tokens. Command substitutions are
 * scanned as scripts of their own; here-document bodies are skipped.
 */
function lex(script: string, nested: Candidate[][]): Token[] {
  const out: Token[] = [];
  let word = "";
  let inWord = false;
  const heredocs: { delim: string; strip: boolean }[] = [];
  const flush = () => {
    if (inWord) out.push({ word });
    word = "";
    inWord = false;
  };
  let i = 0;
  while (i < script.length) {
    const ch = script[i];
    if (ch === "'") {
      const end = script.indexOf("'", i + 1);
      word += script.slice(i + 1, end < 0 ? script.length : end);
      inWord = true;
      i = end < 0 ? script.length : end + 1;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < script.length && script[j] !== '"') {
        if (script[j] === "\\" && j + 1 < script.length) {
          word += script[j + 1];
          j += 2;
        } else if (script[j] === "$" && script[j + 1] === "(") {
          const end = matchParen(script, j + 1);
          nested.push(scriptWrites(script.slice(j + 2, end)));
          word += script.slice(j, end + 1);
          j = end + 1;
        } else word += script[j++];
      }
      inWord = true;
      i = j + 1;
    } else if (ch === "\\") {
      if (script[i + 1] !== "\n") word += script[i + 1] ?? "";
      inWord = true;
      i += 2;
    } else if (ch === "$" && script[i + 1] === "(") {
      const end = matchParen(script, i + 1);
      nested.push(scriptWrites(script.slice(i + 2, end)));
      word += script.slice(i, end + 1);
      inWord = true;
      i = end + 1;
    } else if (ch === "`") {
      const end = script.indexOf("`", i + 1);
      const stop = end < 0 ? script.length : end;
      nested.push(scriptWrites(script.slice(i + 1, stop)));
      word += script.slice(i, stop + 1);
      inWord = true;
      i = stop + 1;
    } else if (ch === "#" && !inWord) {
      while (i < script.length && script[i] !== "\n") i++;
    } else if (ch === " " || ch === "\t" || ch === "\r") {
      flush();
      i++;
    } else if (ch === "\n") {
      flush();
      out.push({ op: "\n" });
      i++;
      while (heredocs.length) {
        const h = heredocs.shift()!;
        while (i < script.length) {
          let eol = script.indexOf("\n", i);
          if (eol < 0) eol = script.length;
          const line = script.slice(i, eol);
          i = eol + 1;
          if ((h.strip ? line.replace(/^\t+/, "") : line) === h.delim) break;
        }
      }
    } else if (ch === ">" || ch === "<" || (ch === "&" && script[i + 1] === ">")) {
      // A redirection; a word made only of digits right before it is its fd (`2>`).
      const fd = inWord && /^\d+$/.test(word) ? word : "";
      if (!(fd && inWord)) flush();
      else {
        word = "";
        inWord = false;
      }
      const m = /^(&>>|&>|>>|>\||>&|>|<<<|<<-|<<|<&|<>|<)/.exec(script.slice(i))!;
      i += m[0].length;
      out.push({ op: fd + m[0] });
      if (m[0] === "<<" || m[0] === "<<-") {
        // The delimiter is the next word; remember it so the body is skipped after the newline.
        while (script[i] === " " || script[i] === "\t") i++;
        let j = i;
        while (j < script.length && !/[\s;&|<>()]/.test(script[j])) j++;
        const delim = script.slice(i, j).replace(/['"\\]/g, "");
        heredocs.push({ delim, strip: m[0] === "<<-" });
        out.push({ word: delim });
        i = j;
      }
    } else if (";&|()".includes(ch)) {
      flush();
      const two = script.slice(i, i + 2);
      const op = ["&&", "||", ";;", "|&"].includes(two) ? two : ch;
      out.push({ op });
      i += op.length;
    } else {
      word += ch;
      inWord = true;
      i++;
    }
  }
  flush();
  return out;
}

function matchParen(s: string, open: number): number {
  let depth = 0;
  for (let j = open; j < s.length; j++) {
    if (s[j] === "(") depth++;
    else if (s[j] === ")" && --depth === 0) return j;
  }
  return s.length;
}

/** Every write candidate of a script line, in order. */
export function scriptWrites(script: string): Candidate[] {
  const nested: Candidate[][] = [];
  const tokens = lex(script, nested);
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
  for (const n of nested) out.push(...n);
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
function commandWrites(words: string[], cwd: string): Candidate[] {
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

// ───────────────────────────── tool inputs ─────────────────────────────

const DEST_KEYS = new Set([
  "dest",
  "dest_path",
  "destination",
  "destination_path",
  "target_path",
  "output_path",
  "out_path",
  "new_path",
  "to",
]);
const PATH_KEYS = new Set(["path", "file_path", "filepath", "filename", "file"]);
const CONTENT_KEYS = new Set([
  "content",
  "contents",
  "text",
  "data",
  "body",
  "new_str",
  "new_string",
  "replacement",
  "patch",
  "diff",
]);

function fold(key: string): string {
  return key.toLowerCase().replace(/-/g, "_");
}

function strings(v: unknown): string[] {
  if (typeof v === "string") return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === "string");
  return [];
}

function asSchema(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : {};
}

/** Write candidates of a tool input, walking nested objects with their sub-schemas. */
export function inputWrites(
  input: Record<string, unknown>,
  schema: Record<string, unknown>,
): Candidate[] {
  const out: Candidate[] = [];
  const templates = strings(schema["murmur-destinations"]);
  for (const t of templates) {
    let unresolved = false;
    const path = t.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const v = input[name];
      if (typeof v !== "string") unresolved = true;
      return typeof v === "string" ? v : "";
    });
    if (!unresolved) out.push({ path, signal: `destination ${t}`, subtree: false, cwd: "." });
  }
  walk(input, schema, out);
  return out;
}

function walk(
  obj: Record<string, unknown>,
  schema: Record<string, unknown>,
  out: Candidate[],
): void {
  const props = asSchema(schema.properties);
  const keys = Object.keys(obj);
  const hasContent = keys.some((k) => CONTENT_KEYS.has(fold(k)));
  for (const k of keys) {
    const sub = asSchema(props[k]);
    const v = obj[k];
    if (sub.format === "murmur-opaque") continue;
    const f = fold(k);
    const named = sub.format === "murmur-destination" || DEST_KEYS.has(f) ||
      (PATH_KEYS.has(f) && hasContent);
    if (named) {
      for (const p of strings(v)) {
        out.push({ path: p, signal: `input key ${k}`, subtree: false, cwd: "." });
      }
    }
    if (Array.isArray(v)) {
      const items = asSchema(sub.items);
      for (const item of v) {
        if (item && typeof item === "object" && !Array.isArray(item)) {
          walk(item as Record<string, unknown>, items, out);
        }
      }
    } else if (v && typeof v === "object") walk(v as Record<string, unknown>, sub, out);
  }
}
