/**
 * Command tools (docs/manifest.md "tools": entries with a `command`): the program runs in the
 * workdir with the call's input JSON on stdin, and what it prints on stdout is the result —
 * plain text, or one JSON object of MCP's CallToolResult shape whose text blocks become the
 * result and whose images become attachments. A non-zero exit is data, as for shell tools.
 */
import { errorMessage } from "../errors.ts";
import { z } from "zod";
import type { CommandToolConfig } from "../manifest/types.ts";
import { decode, headUtf8, TRUNCATE_BYTES, withNewline, writeOutputLog } from "./output.ts";
import { withReadOnly } from "../containment/policy.ts";
import { exitCodeOf, KILL_GRACE_MS, spawnCaptured, type Spawned, terminate } from "./process.ts";
import { resolveOnPath } from "./shell_env.ts";
import { DOOR_TOKEN_ENV, narrowEnv } from "../artifact_env.ts";
import {
  type ImageResult,
  notReached,
  type Tool,
  type ToolContext,
  type ToolResult,
} from "./types.ts";

/**
 * An MCP CallToolResult; other MCP blocks (audio, resource, resource_link) are recognised and left
 * out with a note. Built on first use: no tool has answered when a session starts
 * (docs/benchmarks.md "Cost per session": schemas built at start).
 */
const CallToolResult = z.lazy(() =>
  z.looseObject({
    content: z.array(z.union([
      z.object({ type: z.literal("text"), text: z.string() }),
      z.object({ type: z.literal("image"), mimeType: z.string().min(1), data: z.string() }),
      z.looseObject({ type: z.string() }),
    ])),
    isError: z.boolean().optional(),
  })
);

export interface ParsedOutput {
  text: string;
  images: ImageResult[];
  isError: boolean;
  /** Notes about blocks that could not be used (bad base64, unsupported types). */
  notes: string[];
}

/**
 * Reads a command tool's stdout: a CallToolResult object when it is exactly one JSON object of
 * that shape, else the text as printed.
 */
export function parseToolOutput(stdout: string): ParsedOutput {
  const plain = { text: stdout, images: [], isError: false, notes: [] };
  const trimmed = stdout.trim();
  if (!trimmed.startsWith("{")) return plain;
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    return plain;
  }
  const parsed = CallToolResult.safeParse(json);
  if (!parsed.success) return plain;
  const texts: string[] = [];
  const images: ImageResult[] = [];
  const notes: string[] = [];
  for (const [i, block] of parsed.data.content.entries()) {
    if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
    else if (block.type === "image" && typeof block.data === "string") {
      const data = fromBase64(block.data);
      if (data) images.push({ mediaType: String(block.mimeType), data });
      else notes.push(`[content[${i}]: image data is not valid base64; left out]`);
    } else notes.push(`[content[${i}]: "${block.type}" blocks are not supported; left out]`);
  }
  return {
    text: [...texts, ...notes].join("\n"),
    images,
    isError: parsed.data.isError === true,
    notes,
  };
}

export function fromBase64(s: string): Uint8Array | null {
  const clean = s.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) return null;
  try {
    const bin = atob(clean);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

export interface CommandToolOptions {
  now?: () => number;
  killGraceMs?: number;
  /** Environment for the program; default mur's own. */
  env?: Record<string, string>;
}

export class CommandTool implements Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly #argv: string[];
  /** A packaged tool's own variables (`MURMUR_ARTIFACT_CONFIG`), over mur's environment. */
  readonly #ownEnv: Record<string, string>;
  /** A tool artifact's `capabilities.env.allow` (absent: mur's environment is not narrowed). */
  readonly #hostEnv: string[] | undefined;
  /** A tool artifact's own read-only subtrees, added to the capsule's for its calls. */
  readonly readOnly: string[];
  readonly #data: boolean;
  readonly #now: () => number;
  readonly #o: CommandToolOptions;

  constructor(config: CommandToolConfig, o: CommandToolOptions = {}) {
    this.name = config.name;
    this.description = config.description;
    this.inputSchema = config.inputSchema;
    this.#argv = config.command;
    this.#ownEnv = config.env ?? {};
    this.#hostEnv = config.hostEnv;
    this.readOnly = config.readOnly ?? [];
    this.#data = config.output === "data";
    this.#now = o.now ?? Date.now;
    this.#o = o;
  }

  async call(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const started = this.#now();
    const [program, ...args] = this.#argv;
    const host = this.#o.env ?? commandEnv();
    const env = { ...(this.#hostEnv ? narrowEnv(host, this.#hostEnv) : host), ...this.#ownEnv };
    const resolved = resolveOnPath(program, env.PATH ?? "");
    if (!resolved) {
      return notReached(`tool '${this.name}' cannot run: '${program}' was not found on PATH`);
    }
    if (ctx.signal.aborted) return notReached(`tool '${this.name}' canceled before it started`);
    let s: Spawned;
    try {
      s = spawnCaptured(resolved, {
        args,
        cwd: ctx.workdir,
        env,
        clearEnv: true,
        stdin: new TextEncoder().encode(JSON.stringify(input)),
        // An artifact's own read_only subtrees are mounted read-only for its calls too.
        containment: withReadOnly(ctx.containment, this.readOnly, ctx.workdir),
      });
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound
        ? "the program does not exist"
        : e instanceof Deno.errors.PermissionDenied
        ? "the program is not executable"
        : errorMessage(e);
      return notReached(`tool '${this.name}' cannot run ${resolved}: ${why}`);
    }
    const aborted = await exitOrAbort(s.status, ctx.signal);
    if (aborted) {
      await terminate(s, this.#o.killGraceMs ?? KILL_GRACE_MS);
      await s.finished;
      return notReached(`tool '${this.name}' was stopped because the task was canceled`);
    }
    const exitCode = exitCodeOf(await s.finished);
    const stdout = decode(s.stdout.data());
    const out = parseToolOutput(stdout);
    const data = this.#data && exitCode === 0 ? jsonValue(stdout) : undefined;
    let text = out.text;
    // A failing program's own explanation is usually on stderr; the model needs it to react.
    const stderr = decode(s.stderr.data());
    if (exitCode !== 0) {
      text = withNewline(text) + `[exit code ${exitCode}]` +
        (stderr.trim() ? `\nStderr:\n${withNewline(stderr)}` : "\n");
    }
    let truncated = false;
    const bytes = new TextEncoder().encode(text);
    if (bytes.length > TRUNCATE_BYTES) {
      let logPath: string;
      try {
        logPath = await writeOutputLog(ctx.workdir, `tool-${this.name}`, this.#now(), text);
      } catch (e) {
        logPath = `(not written: ${errorMessage(e)})`;
      }
      text = withNewline(headUtf8(bytes, TRUNCATE_BYTES)) +
        `[output truncated: the first ${TRUNCATE_BYTES} of ${bytes.length} bytes are shown; ` +
        `full output in ${logPath}]\n`;
      truncated = true;
    }
    return {
      content: text,
      fenceSource: null,
      isError: out.isError,
      exitCode,
      truncated,
      durationMs: this.#now() - started,
      images: out.images,
      ...(data !== undefined && { data }),
    };
  }
}

/** A tool's whole stdout as one JSON value, or undefined when it is not JSON. */
function jsonValue(stdout: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(stdout) };
  } catch {
    return undefined;
  }
}

function exitOrAbort(status: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  // A cancel that came while the program was being spawned has already fired its event.
  if (signal.aborted) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => resolve(true);
    signal.addEventListener("abort", onAbort, { once: true });
    status.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(false);
    });
  });
}

/**
 * mur's environment for a command tool, minus `MURMUR_DOOR_TOKEN`: the door token the
 * operator's shell holds for `mur watch --url` / `mur cancel --url` is a client credential no
 * tool needs (and would show in `ps e` and /proc/<pid>/environ). The operator's own variables,
 * keys a tool calls its service with included, pass: a command tool is the operator's program.
 */
export function commandEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  delete env[DOOR_TOKEN_ENV];
  return env;
}
