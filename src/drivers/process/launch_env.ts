/**
 * What the harness is launched with besides its plan: the binary (inference.command or the
 * dialect's default, on PATH), its environment (starts empty), its version.
 */
import { MurError } from "../../errors.ts";

export interface ResolvedBinary {
  path: string;
  source: "inference.command" | "describe";
}

/** `inference.command` or the default; a name with `/` is a path, else looked up on PATH. */
export async function resolveBinary(
  command: string | undefined,
  fallback: string,
  pathVar: string,
  baseDir: string,
): Promise<ResolvedBinary> {
  const source = command ? "inference.command" : "describe";
  const name = command ?? fallback;
  const candidates = name.includes("/")
    ? [name.startsWith("/") ? name : `${baseDir}/${name}`]
    : pathVar.split(":").filter((d) => d).map((d) => `${d}/${name}`);
  for (const c of candidates) {
    try {
      const st = await Deno.stat(c);
      if (st.isFile && (st.mode === null || (st.mode & 0o111) !== 0)) {
        return { path: c, source };
      }
    } catch {
      // Not here; try the next.
    }
  }
  const namedBy = command ? "inference.command" : "the process driver's describe()";
  throw new MurError(
    "E-RUN-006",
    `harness binary '${name}', named by ${namedBy}, was not found on this host`,
    command
      ? "install the harness or fix inference.command"
      : "install the harness CLI or set inference.command to its path",
  );
}

/**
 * The harness environment: PATH and HOME from mur's, then the dialect's defaults, then
 * `inference.env` (or the dialect's credential names when absent). `NAME` copies mur's value
 * when set; `NAME=value` is used as given.
 */
export function harnessEnv(
  host: Record<string, string>,
  entries: string[] | undefined,
  defaultNames: string[],
  defaults: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ["PATH", "HOME"]) if (host[k] !== undefined) env[k] = host[k];
  Object.assign(env, defaults);
  for (const entry of entries ?? defaultNames) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    else if (eq < 0 && host[entry] !== undefined) env[entry] = host[entry];
  }
  return env;
}

export interface VersionProbe {
  version: string | null;
  tested: boolean;
}

/** Runs the version args (10 s cap) and checks the first non-empty line's tokens. */
export async function probeVersion(
  binary: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  tested: string[],
): Promise<VersionProbe> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  try {
    const out = await new Deno.Command(binary, {
      args,
      env,
      clearEnv: true,
      cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      signal: ac.signal,
    }).output();
    const line = new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim())
      .find((l) => l) ?? null;
    if (!line) return { version: null, tested: false };
    const tokens = line.split(/\s+/).map((t) => t.replace(/^v/, ""));
    return { version: line, tested: tokens.some((t) => tested.includes(t)) };
  } catch {
    return { version: null, tested: false };
  } finally {
    clearTimeout(timer);
  }
}
