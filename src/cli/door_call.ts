/** One JSON-RPC call to a capsule's door (CancelTask, murmur.StopSession) from the CLI. */
import { errorMessage, MurError } from "../errors.ts";
import { httpBase } from "../watch/card_probe.ts";
import { type HttpResponse, request } from "../http/http1_client.ts";
import { murLine } from "../invocation.ts";
import { refusalHint } from "../watch/refusal_hint.ts";

export type RpcAnswer =
  | { ok: true; result: unknown }
  | { ok: false; code: number; message: string; data?: unknown };

/**
 * POSTs `{method, params}` with `A2A-Version: 1.0` and the token as a bearer. A JSON-RPC error
 * comes back as `{ok:false}`; no connection is E-IO-003, an HTTP refusal or an answer that is not
 * a JSON-RPC body is E-IO-004.
 */
export async function callDoor(
  url: string,
  method: string,
  params: Record<string, unknown>,
  token: string | undefined,
  timeoutMs = 10_000,
): Promise<RpcAnswer> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "a2a-version": "1.0",
  };
  if (token) headers.authorization = `Bearer ${token}`;
  const signal = AbortSignal.timeout(timeoutMs);
  let res: HttpResponse;
  let text: string;
  try {
    res = await request({
      url: `${httpBase(url)}/`,
      method: "POST",
      headers,
      signal,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    text = await res.text();
  } catch (e) {
    const why = signal.aborted ? `no answer within ${timeoutMs / 1000}s` : errorMessage(e);
    throw new MurError(
      "E-IO-003",
      `could not reach the door at ${url} for ${method}: ${why}`,
      `check that the capsule is running (\`${murLine("ps")}\`)`,
    );
  }
  if (res.status === 401 || res.status === 403) {
    let why = text.trim();
    try {
      why = JSON.parse(text).message ?? why;
    } catch { /* keep the raw text */ }
    throw new MurError(
      "E-IO-004",
      `the door at ${url} refused ${method} with HTTP ${res.status}: ${why}`,
      refusalHint(res.status, method, Boolean(token)),
    );
  }
  let body: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
  try {
    body = JSON.parse(text);
  } catch {
    throw new MurError(
      "E-IO-004",
      `the door at ${url} answered ${method} with HTTP ${res.status} and no JSON-RPC body`,
      "is this address a murmur capsule's door?",
    );
  }
  if (body.error) {
    return { ok: false, code: body.error.code, message: body.error.message, data: body.error.data };
  }
  return { ok: true, result: body.result };
}
