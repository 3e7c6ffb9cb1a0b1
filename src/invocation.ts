/**
 * How this mur was invoked, and so how to print a mur command line the user can run as printed
 * (every hint, the demos' closing lines, `--help`). docs/running.md "Command lines mur prints"
 * says the same for users.
 *
 * The prefix, first match wins:
 * 1. `MUR_COMMAND` set and not blank: used verbatim (an install shim sets `MUR_COMMAND=mur`).
 * 2. A compiled binary: `mur` when `mur` on PATH is this binary, else the binary's absolute path.
 * 3. From source, with the working directory inside the clone: `deno task mur`, or
 *    `npx -y deno@2 task mur` when no `deno` is on the user's PATH. `deno task` runs its task in
 *    the clone's root whatever folder of the clone it is typed in, so paths are printed relative
 *    to the clone's root.
 * 4. From source, run from outside the clone (`deno run -A /path/to/main.ts …`): that same
 *    command line with main.ts's absolute path, which runs from anywhere.
 *
 * Paths in hints are relative to the folder the printed command resolves them against (the
 * clone's root for 3, the working directory otherwise) when they are inside it, else absolute.
 * "The user's PATH" leaves out the folders npm/npx put in front of it (`node_modules/.bin`, its
 * node-gyp-bin): a `deno` there is the one `npx -y deno@2` fetched, not one the user can type.
 */

import { cloneDir } from "./module_root.ts";

/** What the prefix is derived from; `invocationOf` takes it so tests can vary each part. */
export interface InvocationFacts {
  env: Record<string, string | undefined>;
  /** The working directory (absolute). */
  cwd: string;
  /** This process's executable (deno, or the compiled mur). */
  execPath: string;
  /** A compiled binary (`deno compile`). */
  standalone: boolean;
  /** The clone's root (the folder of main.ts and deno.json), absolute, no trailing `/`. */
  root: string;
  /** Whether an executable file is at this path. */
  isExecutable: (path: string) => boolean;
}

export interface Invocation {
  /** The words that start every mur command line, e.g. `npx -y deno@2 task mur`. */
  prefix: string;
  /** The folder relative paths in a printed command line resolve against. */
  base: string;
}

export function invocationOf(f: InvocationFacts): Invocation {
  const given = f.env.MUR_COMMAND?.trim();
  if (given) return { prefix: given, base: f.cwd };
  if (f.standalone) {
    const onPath = which("mur", userPath(f.env), f.isExecutable);
    return { prefix: onPath === f.execPath ? "mur" : shellWord(f.execPath), base: f.cwd };
  }
  const deno = which("deno", userPath(f.env), f.isExecutable) ? "deno" : "npx -y deno@2";
  if (inside(f.cwd, f.root)) return { prefix: `${deno} task mur`, base: f.root };
  return { prefix: `${deno} run -A ${shellWord(`${f.root}/main.ts`)}`, base: f.cwd };
}

/** The PATH entries the user's shell has: those npm/npx put in front are left out (see above). */
export function userPath(env: Record<string, string | undefined>): string[] {
  return (env.PATH ?? "").split(":").filter((d) =>
    d !== "" && !/(^|\/)node_modules\/\.bin\/?$/.test(d) && !/\/node-gyp-bin\/?$/.test(d)
  );
}

function which(
  name: string,
  dirs: string[],
  isExecutable: (p: string) => boolean,
): string | null {
  for (const d of dirs) {
    const p = `${d.replace(/\/+$/, "")}/${name}`;
    if (isExecutable(p)) return p;
  }
  return null;
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir + "/");
}

/** `s` as one shell word: as it is when it is plainly safe, else single-quoted. */
export function shellWord(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `path` as a hint prints it: relative to `base` when inside it, else absolute. */
export function pathFrom(inv: Invocation, path: string): string {
  const abs = path.startsWith("/") ? path : `${inv.base}/${path}`;
  const clean = abs.replace(/\/+$/, "").replace(/\/\.(?=\/|$)/g, "") || "/";
  if (clean === inv.base) return ".";
  if (!inside(clean, inv.base)) return clean;
  // `./ses_…`, not `ses_…`: a word with a `/` is a path to every command that also takes names.
  const rel = clean.slice(inv.base.length + 1);
  return rel.includes("/") ? rel : `./${rel}`;
}

function isExecutable(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isFile && (st.mode === null || (st.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

let current: Invocation | undefined;

/** This process's invocation (computed once: nothing it depends on changes while mur runs). */
export function invocation(): Invocation {
  current ??= invocationOf({
    env: Deno.env.toObject(),
    cwd: Deno.cwd(),
    execPath: Deno.execPath(),
    standalone: Deno.build.standalone === true,
    root: cloneDir(),
    isExecutable,
  });
  return current;
}

/** A mur command line to print: the prefix, then `args` (each quoted when it needs it). */
export function murLine(...args: string[]): string {
  return [invocation().prefix, ...args.map(shellWord)].join(" ");
}

/** A path to print in a mur command line (see `pathFrom`). */
export function murPath(path: string): string {
  return pathFrom(invocation(), path);
}

/**
 * A usage text as `--help` and usage errors print it: each synopsis line's leading `mur` is the
 * prefix, so the synopsis can be copied as it stands.
 */
export function usageText(usage: string): string {
  const { prefix } = invocation();
  if (prefix === "mur") return usage;
  return usage.replace(/^(usage: | {7})mur(?= )/gm, (_m, lead: string) => lead + prefix)
    .replace(/^mur <command> --help/m, `${prefix} <command> --help`);
}
