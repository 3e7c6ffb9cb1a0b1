/**
 * `capabilities.filesystem.read_only` (docs/manifest.md "capabilities"): calls identified as writes
 * into a read-only subtree are refused before they run. Detection reads the call, it does not
 * sandbox it: shell redirections and the write-position arguments of the usual file-changing
 * commands, and, for other tools, input keys that name a destination. It errs on the side of
 * refusing a command that plainly writes there; it cannot see writes a program decides on by
 * itself.
 */
import { posix } from "../paths.ts";
import { inputWrites } from "./read_only_input.ts";
import { type Candidate, commandWrites, expandHome, scriptWrites } from "./read_only_shell.ts";
import { ShellWordsError, splitShellWords } from "./shell_words.ts";

export interface WriteHit {
  /** The path as the call wrote it. */
  path: string;
  /** The read-only entry it falls under. */
  rule: string;
  /** What identified the write: `redirection >`, `rm argument`, `input key dest`. */
  signal: string;
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
