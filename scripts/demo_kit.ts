/**
 * What both demos need (`deno task demo`: scripts/demo.ts, `deno task demo:crew`:
 * scripts/demo_crew.ts): mur as a child process run from the repository root, every child kept
 * so that each is stopped by pid before the demo exits, the readiness line read with a bound, and
 * output that interleaves with `mur watch`'s in true order.
 */
export const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const MAIN = `${ROOT}/main.ts`;

const color = Deno.stdout.isTerminal() && Deno.env.get("NO_COLOR") === undefined;
export const bold = (s: string) => color ? `\x1b[1m${s}\x1b[0m` : s;
export const dim = (s: string) => color ? `\x1b[2m${s}\x1b[0m` : s;

const enc = new TextEncoder();
/** Written out at once, so the demo's lines and mur watch's interleave in true order. */
export function say(text = ""): void {
  Deno.stdout.writeSync(enc.encode(text + "\n"));
}

const children = new Set<Deno.ChildProcess>();

/** `mur <args>` from the repository root; kept until it exits, for stopAll. */
export function mur(args: string[], stdout: "piped" | "inherit"): Deno.ChildProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    cwd: ROOT,
    stdin: "null",
    stdout,
    stderr: "inherit",
  }).spawn();
  children.add(child);
  child.status.finally(() => children.delete(child));
  return child;
}

export function kill(child: Deno.ChildProcess, sig: Deno.Signal): void {
  try {
    child.kill(sig);
  } catch {
    // already gone
  }
}

/**
 * SIGTERM to every child still running (a capsule, or a formation's launcher, ends cleanly on
 * it), then SIGKILL for whatever is still there after `graceMs`.
 */
export async function stopAll(graceMs: number): Promise<void> {
  const left = [...children];
  for (const c of left) kill(c, "SIGTERM");
  const timer = setTimeout(() => left.forEach((c) => kill(c, "SIGKILL")), graceMs);
  await Promise.allSettled(left.map((c) => c.status));
  clearTimeout(timer);
}

/** `p`, or "timeout" once `ms` have passed. */
export function within<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms)),
  ]);
}

/** The first stdout line of `child` (its readiness line), bounded by `ms`. */
export async function firstLine(child: Deno.ChildProcess, ms: number): Promise<string | null> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const deadline = Date.now() + ms;
  try {
    while (!buf.includes("\n")) {
      const r = await within(reader.read(), Math.max(0, deadline - Date.now()));
      if (r === "timeout" || r.done) return null;
      buf += r.value;
    }
    return buf.slice(0, buf.indexOf("\n"));
  } finally {
    // Nothing else comes on a --json capsule's stdout; let it drain in the background.
    reader.releaseLock();
    child.stdout.cancel().catch(() => {});
  }
}
