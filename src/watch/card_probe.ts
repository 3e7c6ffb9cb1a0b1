/**
 * Which session a door answers for, from its agent card: how the CLI and the watch client check
 * that a running-session record's door is that session's before they call or signal it.
 */
import { errorMessage } from "../errors.ts";
import { CAPSULE_URI } from "../events/frames.ts";
import { request } from "../http/http1_client.ts";

export type CardProbe =
  | { ok: true; sessionId: string }
  | { ok: false; reason: string };

/**
 * `localhost:41873` → `http://localhost:41873` (a url with a scheme is kept, minus a trailing /).
 */
export function httpBase(url: string): string {
  const base = /^[a-z]+:\/\//i.test(url) ? url : `http://${url}`;
  return base.replace(/\/+$/, "");
}

function sessionIdOfCard(card: unknown): string | null {
  const exts = (card as { capabilities?: { extensions?: unknown } })?.capabilities?.extensions;
  if (!Array.isArray(exts)) return null;
  for (const ext of exts) {
    if (ext && typeof ext === "object" && (ext as { uri?: unknown }).uri === CAPSULE_URI) {
      const id = (ext as { params?: { sessionId?: unknown } }).params?.sessionId;
      return typeof id === "string" ? id : null;
    }
  }
  return null;
}

/**
 * Asks the door which session it answers for: the public card, or on an authenticated door
 * (a token given) `GetExtendedAgentCard`, since the public card there omits the capsule extension.
 */
export async function probeCard(
  url: string,
  operatorToken?: string,
  timeoutMs = 5000,
): Promise<CardProbe> {
  const base = httpBase(url);
  const signal = AbortSignal.timeout(timeoutMs);
  let card: unknown;
  try {
    if (operatorToken) {
      const res = await request({
        url: `${base}/`,
        method: "POST",
        signal,
        headers: {
          "content-type": "application/json",
          "a2a-version": "1.0",
          authorization: `Bearer ${operatorToken}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" }),
      });
      const body = await res.text();
      if (!res.ok) return { ok: false, reason: `GetExtendedAgentCard answered HTTP ${res.status}` };
      const parsed = JSON.parse(body);
      if (parsed?.error) {
        return {
          ok: false,
          reason: `GetExtendedAgentCard answered ${parsed.error.code} ${parsed.error.message}`,
        };
      }
      card = parsed?.result;
    } else {
      const res = await request({
        url: `${base}/.well-known/agent-card.json`,
        method: "GET",
        signal,
      });
      const body = await res.text();
      if (!res.ok) {
        return { ok: false, reason: `the agent card request answered HTTP ${res.status}` };
      }
      card = JSON.parse(body);
    }
  } catch (e) {
    if (e instanceof SyntaxError) {
      return { ok: false, reason: `the agent card from ${url} is not JSON` };
    }
    const why = signal.aborted ? `no answer within ${timeoutMs} ms` : errorMessage(e);
    return { ok: false, reason: `failed to connect: ${why}` };
  }
  const id = sessionIdOfCard(card);
  if (!id) return { ok: false, reason: `the agent card from ${url} names no session` };
  return { ok: true, sessionId: id };
}
