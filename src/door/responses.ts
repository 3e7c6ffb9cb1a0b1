/** The door's plain responses: an empty one with a status, and a JSON body. */

export const JSON_HEADERS = { "content-type": "application/json" };

export function bare(status: number, extra: Record<string, string> = {}): Response {
  return new Response(null, { status, headers: extra });
}

export function json(status: number, body: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...JSON_HEADERS, ...extra } });
}

/**
 * One step of a request's way in: a Response ends the request there, undefined passes it to the
 * next step. The door composes its checks from these (the token gate, the body cap, the
 * envelope checks), in the order docs/protocol.md "Refusals" lists.
 */
export type Step<C> = (c: C) => Response | undefined | Promise<Response | undefined>;

/** Runs the steps in order; the first Response is the answer, undefined when all passed. */
export async function through<C>(c: C, steps: readonly Step<C>[]): Promise<Response | undefined> {
  for (const step of steps) {
    const answer = await step(c);
    if (answer) return answer;
  }
  return undefined;
}
