/**
 * The consent and trust rules of src/door/peer_tasks.ts over every combination a request can
 * bring: origin header × trust header × caller's grant × the manifest's consent, against the rule
 * written out plainly (docs/door.md "Peer tasks and trust").
 */
import assert from "node:assert/strict";
import type { Grant } from "../../src/door/auth.ts";
import {
  claimedOrigin,
  honouredTrust,
  PEER_NOT_ACCEPTED_BODY,
  peerNotAccepted,
  refusesPeer,
} from "../../src/door/peer_tasks.ts";

const ORIGINS = [null, "peer", " PEER ", "Peer", "completion", "user", "event", "peer, peer", ""];
const TRUSTS = [null, "trusted", "TRUSTED", "untrusted", "yes", ""];
const GRANTS: Record<string, Grant | null> = {
  public: null,
  operator: { credential: "operator", scopes: new Set(["SendMessage"]) },
  declared: { credential: "partner", scopes: new Set(["SendMessage"]) },
  edge: { credential: "member:lead", scopes: new Set(["SendMessage"]), member: true },
};

function request(origin: string | null, trust: string | null): Request {
  const h = new Headers();
  if (origin !== null) h.set("x-murmur-task-origin", origin);
  if (trust !== null) h.set("x-murmur-task-trust", trust);
  return new Request("http://127.0.0.1/", { method: "POST", headers: h });
}

Deno.test("peer tasks: refused exactly when the origin is peer and the manifest does not consent; trusted exactly from a proven peer that claims it", () => {
  for (const o of ORIGINS) {
    const isPeer = o !== null && o.trim().toLowerCase() === "peer";
    const origin = o !== null && ["peer", "completion"].includes(o.trim().toLowerCase())
      ? o.trim().toLowerCase()
      : "event";
    for (const t of TRUSTS) {
      for (const [name, grant] of Object.entries(GRANTS)) {
        for (const accept of [undefined, false, true]) {
          const req = request(o, t);
          const m = accept === undefined ? {} : { exports: { peerTasks: { accept } } };
          const what = `${o} / ${t} / ${name} / ${accept}`;
          assert.equal(claimedOrigin(req), origin, what);
          assert.equal(refusesPeer(req, m), isPeer && accept !== true, what);
          const proven = name === "operator" || name === "edge";
          const claims = t !== null && t.trim().toLowerCase() === "trusted";
          assert.equal(
            honouredTrust(req, claimedOrigin(req), grant),
            origin !== "event" && proven && claims,
            what,
          );
        }
      }
    }
  }
});

Deno.test("peer tasks: the refusal is one fixed 403, the same bytes every time, no challenge", async () => {
  const bodies = new Set<string>();
  for (let i = 0; i < 3; i++) {
    const r = peerNotAccepted();
    assert.equal(r.status, 403);
    assert.deepEqual([...r.headers], [["content-type", "application/json"]]);
    bodies.add(await r.text());
  }
  assert.deepEqual([...bodies], [PEER_NOT_ACCEPTED_BODY]);
  assert.equal(
    PEER_NOT_ACCEPTED_BODY,
    '{"error":"peer_not_accepted","message":"this capsule does not accept tasks from peers"}',
  );
});
