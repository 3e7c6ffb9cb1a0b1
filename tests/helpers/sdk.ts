/**
 * What the tests that drive mur with the real A2A client (@a2a-js/sdk) share: a client on one
 * binding, a user message in the SDK's shape, the loose cast its requests need, and a check that
 * an answer is a task.
 */
import assert from "node:assert/strict";
import { Role } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";

/** The card names `localhost`; the door listens on 127.0.0.1, so requests go there. */
export const loopback: typeof fetch = (input, init) =>
  fetch(
    String(input instanceof Request ? input.url : input).replace("//localhost:", "//127.0.0.1:"),
    init,
  );

/** The SDK's client from the card at `url`, on one binding only (preferred), over loopback. */
export function sdkClient(url: string, binding: "JSONRPC" | "HTTP+JSON"): Promise<Client> {
  return new ClientFactory({
    transports: [
      binding === "JSONRPC"
        ? new JsonRpcTransportFactory({ fetchImpl: loopback })
        : new RestTransportFactory({ fetchImpl: loopback }),
    ],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: loopback }),
    preferredTransports: [binding],
  }).createFromUrl(url);
}

/** A user's text message; with `taskId`, a reply to that task. */
export function sdkMessage(text: string, taskId?: string) {
  return {
    messageId: crypto.randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text" as const, value: text }, mediaType: "text/plain" }],
    ...(taskId ? { taskId } : {}),
  };
}

/** ts-proto request types demand every field; the transport fills defaults for what is absent. */
// deno-lint-ignore no-explicit-any
export const q = (x: unknown) => x as any;

// deno-lint-ignore no-explicit-any
export function taskOf(r: any) {
  assert.ok(r && typeof r.id === "string", `not a task: ${JSON.stringify(r)}`);
  return r;
}
