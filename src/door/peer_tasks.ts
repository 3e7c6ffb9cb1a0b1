/**
 * Peer tasks and trust at the door (docs/door.md "Peer tasks and trust"):
 *
 * - **Consent.** A request whose `x-murmur-task-origin` is `peer` is served only when the
 *   manifest says `exports.peer_tasks.accept: true`; otherwise it gets one fixed `403
 *   peer_not_accepted`, the same bytes on every path, method and binding, with no
 *   `WWW-Authenticate` (no credential would change the answer). It is checked after the token
 *   gate (src/door/gate.ts), so an unproven caller learns nothing it could not learn already.
 * - **Trust.** `x-murmur-task-trust: trusted` is the caller's claim. It is honoured only with
 *   origin `peer` or `completion` *and* a token that proves the caller is a peer this capsule
 *   knows: an edge token of its formation for this door (src/door/auth.ts, minted by the
 *   launcher), or the operator token (held by whoever started the capsule: the operator, or the
 *   capsule that delegated to it, src/crew/calls/delegation.ts). A public door proves nobody, and a
 *   credential the manifest declares is handed to outside callers, so their claim is not taken:
 *   their task reaches the model fenced as `task:<origin>` (src/session/loop.ts).
 */
import type { Manifest } from "../manifest/types.ts";
import type { Origin } from "../session/task_record.ts";
import type { Grant } from "./auth.ts";

export const PEER_NOT_ACCEPTED_BODY = JSON.stringify({
  error: "peer_not_accepted",
  message: "this capsule does not accept tasks from peers",
});

/** The one refusal: status, content type and body identical for every request it refuses. */
export function peerNotAccepted(): Response {
  return new Response(PEER_NOT_ACCEPTED_BODY, {
    status: 403,
    headers: { "content-type": "application/json" },
  });
}

/** The origin a request claims: exact `peer`/`completion` (any case), else `event`. */
export function claimedOrigin(req: Request): Origin {
  const raw = (req.headers.get("x-murmur-task-origin") ?? "").trim().toLowerCase();
  return raw === "peer" || raw === "completion" ? raw : "event";
}

/** Whether the door refuses `req` for consent: a peer request to a capsule that takes none. */
export function refusesPeer(req: Request, manifest: Pick<Manifest, "exports">): boolean {
  return manifest.exports?.peerTasks.accept !== true && claimedOrigin(req) === "peer";
}

/** Whether `grant` proves a peer this capsule knows (an edge token for this door, the operator). */
export function provesPeer(grant: Grant | null): boolean {
  if (!grant) return false;
  return grant.member === true || grant.credential === "operator";
}

/** The task's trust: the caller's claim, taken only from a proven peer with a peer origin. */
export function honouredTrust(req: Request, origin: Origin, grant: Grant | null): boolean {
  if (origin === "event" || !provesPeer(grant)) return false;
  return (req.headers.get("x-murmur-task-trust") ?? "").trim().toLowerCase() === "trusted";
}
