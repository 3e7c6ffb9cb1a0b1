/**
 * Shared bits of the process-transport tests: a driver on a real harness CLI in a HOME and
 * workdir of its own, collecting an attempt's parts, bounded.
 */
import {
  type AttemptRequest,
  createHarnessDriver,
  type HarnessDriver,
  type HarnessPart,
} from "../../../src/drivers/process/mod.ts";
import type { ToolResult } from "../../../src/tools/types.ts";

/** What createHarnessDriver takes besides the harness: the workdir, HOME, store, limits. */
type DriverContext = Parameters<typeof createHarnessDriver>[1];

/**
 * A harness driver on the real CLI `command` (tests/drivers/process/install.ts), with a fresh
 * HOME and workdir; `env` makes the harness's environment in that HOME. `cleanup` closes the
 * driver and the fake endpoint and removes both folders.
 */
export async function harnessSetup<E extends { close(): Promise<void> }>(o: {
  driver: "claude-code" | "codex";
  command: string;
  endpoint: E;
  env: (home: string) => string[] | Promise<string[]>;
  context?: Partial<DriverContext>;
}): Promise<{ driver: HarnessDriver; endpoint: E; cleanup(): Promise<void> }> {
  const home = await Deno.makeTempDir({ prefix: `mur-${o.driver}-home-` });
  const workdir = await Deno.makeTempDir({ prefix: `mur-${o.driver}-wd-` });
  const driver = createHarnessDriver({
    transport: "process",
    driver: o.driver,
    command: o.command,
    env: await o.env(home),
    maxTurns: 10,
    maxTokens: 1000,
    systemPromptSource: "none",
    idleTimeoutSecs: 120,
  }, {
    workdir,
    baseDir: workdir,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    ...o.context,
  });
  return {
    driver,
    endpoint: o.endpoint,
    async cleanup() {
      await driver.close();
      await o.endpoint.close();
      await Deno.remove(home, { recursive: true }).catch(() => {});
      await Deno.remove(workdir, { recursive: true }).catch(() => {});
    },
  };
}

export function request(over: Partial<AttemptRequest> = {}): AttemptRequest {
  const prompt = over.prompt ?? "hello";
  return {
    task: { id: "tsk_a", contextId: "ctx_a", text: prompt },
    prompt,
    resume: "new",
    conversation: "stateless",
    maxTurns: 10,
    turnsUsed: 0,
    tools: [],
    dispatch: () => Promise.reject(new Error("no tools in this test")),
    ...over,
  };
}

export function fenced(tool: string, text: string): ToolResult {
  return {
    content: `<untrusted-content source=tool:${tool}>\n${text}\n</untrusted-content>`,
    fenceSource: `tool:${tool}`,
    isError: false,
    exitCode: 0,
    truncated: false,
    durationMs: 7,
    images: [],
  };
}

/**
 * Runs one attempt to its end (or `timeoutMs`, which fails the test), calling `onPart` for each
 * part as it arrives.
 */
export async function collect(
  driver: HarnessDriver,
  req: AttemptRequest,
  opts: {
    signal?: AbortSignal;
    timeoutMs?: number;
    onPart?: (p: HarnessPart) => void | Promise<void>;
  } = {},
): Promise<HarnessPart[]> {
  const parts: HarnessPart[] = [];
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const run = (async () => {
    for await (const p of driver.attempt(req, opts.signal ?? new AbortController().signal)) {
      parts.push(p);
      await opts.onPart?.(p);
    }
  })();
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`attempt did not end within ${timeoutMs} ms: ${JSON.stringify(parts)}`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
  }
  return parts;
}

export function resultOf(parts: HarnessPart[]): Extract<HarnessPart, { type: "result" }> {
  const r = parts.at(-1);
  if (!r || r.type !== "result") throw new Error(`last part is not a result: ${JSON.stringify(r)}`);
  if (parts.filter((p) => p.type === "result").length !== 1) {
    throw new Error("more than one result");
  }
  return r;
}

export function traces(parts: HarnessPart[], eventType: string): Record<string, unknown>[] {
  return parts.flatMap((p) => p.type === "trace" && p.eventType === eventType ? [p.fields] : []);
}

/** Whether a pid is still alive (signal 0). */
export function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}
