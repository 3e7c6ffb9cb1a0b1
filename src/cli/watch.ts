/**
 * `mur watch [SESSION] | --url HOST:PORT [--json]`: follow a running session's event stream
 * (seed 000, "What mur watch implements"). SESSION defaults to @1 and is resolved and verified
 * against the running records; --url skips resolution and presents $MURMUR_DOOR_TOKEN if set.
 */
import { probeCard, resolveSession } from "../session/running.ts";
import { watch, type WatchTarget } from "../watch/watch.ts";
import { parse, UsageError, usageFailure } from "./args.ts";
import { stdoutColor, stdoutWidth, writeErr, writeOut } from "./output.ts";

const USAGE = `usage: mur watch [SESSION] [--json]
       mur watch --url HOST:PORT [--json]

SESSION is @N (N-th newest, default @1), a full ses_ id, or a unique suffix of 4+ characters.
--url presents $MURMUR_DOOR_TOKEN as the bearer token when it is set.`;

export async function watchCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(args, {
      url: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    }, USAGE);
    if (parsed.values.help) {
      console.log(USAGE);
      return 0;
    }
    if (parsed.positionals.length > 1) throw new UsageError("too many arguments", USAGE);
    if (parsed.values.url !== undefined && parsed.positionals.length > 0) {
      throw new UsageError("give a SESSION or --url, not both", USAGE);
    }
  } catch (e) {
    if (e instanceof UsageError) return usageFailure("watch", e);
    throw e;
  }
  const { values, positionals } = parsed;

  let target: WatchTarget;
  let connected: string;
  if (values.url !== undefined) {
    const url = values.url.replace(/^https?:\/\//, "").replace(/\/+$/, "");
    const token = Deno.env.get("MURMUR_DOOR_TOKEN") || undefined;
    target = { url, name: url, token };
    // Name the session when the card says which it is; a door that does not say is still watched.
    const probe = await probeCard(url, token, 2000);
    connected = probe.ok
      ? `[murmur] watching ${probe.sessionId} at ${url}`
      : `[murmur] watching ${url}`;
  } else {
    const { record } = await resolveSession(positionals[0] ?? "@1");
    target = { url: record.url, name: record.session_id, token: record.tokens?.operator };
    connected =
      `[murmur] watching ${record.session_id} (${record.capsule_name}@${record.capsule_version}) at ${record.url}`;
  }

  try {
    return await watch(target, { stdout: writeOut, stderr: writeErr }, {
      json: values.json ?? false,
      color: !values.json && stdoutColor(),
      terminal: Deno.stdout.isTerminal(),
      width: stdoutWidth(),
      connectedLine: connected,
    });
  } catch (e) {
    // The reader of a pipe went away (`mur watch | head -1`): nothing left to write to.
    if (e instanceof Deno.errors.BrokenPipe) return 0;
    throw e;
  }
}
