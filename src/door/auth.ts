/**
 * Door tokens (docs/door.md: authentication): minted at launch, valid until the session ends.
 * `mdt1.<base64url(JSON {credential, scopes})>.<base64url(HMAC-SHA256)>`, MAC over
 * `murmur-door-token-v1` 0x1f <payload segment>, with a random key held only in memory — or, on a
 * capsule that publishes to a cluster (docs/edge.md), a key derived from the
 * operator's shared `MURMUR_CLUSTER_KEY` and the session id, which `mur edge` derives the same way
 * to verify the same tokens. The shared key is never written anywhere by mur, Redis included.
 *
 * A formation member's door (docs/crews.md: tokens) also takes **edge tokens**: the same form,
 * payload `{credential: "member:<caller>", scopes, formation, to}`, MAC'd with the formation's key
 * that the launcher minted them with and handed this member in a private file
 * (src/crew/formation/membership.ts). A valid edge token for another member's door is refused 403
 * (`not_permitted`); one for this door is a grant limited to the caller's own tasks.
 */
import { SCOPES as DOOR_SCOPES } from "../a2a/methods.ts";
import type { Credential } from "../manifest/types.ts";

export const SCOPES = DOOR_SCOPES;

export interface Grant {
  credential: string;
  scopes: Set<string>;
  /** An edge token of this formation: the caller reaches only the tasks it started. */
  member?: boolean;
  /** An edge token of this formation for another member's door: refused 403. */
  notPermitted?: boolean;
}

/** What a formation member's door knows of its formation (src/crew/formation/membership.ts). */
export interface FormationDoor {
  formationId: string;
  /** This member's roster name: edge tokens name it as `to`. */
  member: string;
  /** The formation's 32-byte MAC key. */
  key: Uint8Array;
}

/** What an edge token reaches: a member call, nothing that streams the session or stops it. */
export const EDGE_SCOPES = ["SendMessage", "GetTask", "SubscribeToTask", "CancelTask"] as const;

async function hmacKey(raw: Uint8Array): Promise<CryptoKey> {
  return await crypto.subtle.importKey(
    "raw",
    raw as BufferSource,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
}

async function sealed(key: CryptoKey, payload: object): Promise<string> {
  const body = b64url(enc.encode(JSON.stringify(payload)));
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, macInput(body) as BufferSource));
  return `mdt1.${body}.${b64url(mac)}`;
}

/** The edge token `from` presents at `to`'s door, minted by the launcher with the formation key. */
export async function mintEdgeToken(
  key: Uint8Array,
  formationId: string,
  from: string,
  to: string,
): Promise<string> {
  return await sealed(await hmacKey(key), {
    credential: `member:${from}`,
    scopes: [...EDGE_SCOPES],
    formation: formationId,
    to,
  });
}

const enc = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function unb64url(s: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return null;
  try {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function macInput(payload: string): Uint8Array {
  return enc.encode(`murmur-door-token-v1\x1f${payload}`);
}

/** Constant-time comparison of two byte strings. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** The environment variable holding the operator's shared cluster key. */
export const CLUSTER_KEY_ENV = "MURMUR_CLUSTER_KEY";
/** A shared key shorter than this is refused: it would be guessable. */
export const CLUSTER_KEY_MIN_BYTES = 32;

/**
 * One session's token key from the shared cluster key: HMAC-SHA256(shared,
 * `murmur-door-key-v1` 0x1f <session id>). Tokens stay bound to their session: another session's
 * key differs, so a token is refused there as it is on a capsule's own door.
 */
export async function sessionTokenKey(shared: string, sessionId: string): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey(
    "raw",
    enc.encode(shared),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(
    await crypto.subtle.sign("HMAC", k, enc.encode(`murmur-door-key-v1\x1f${sessionId}`)),
  );
}

export class DoorAuth {
  private constructor(
    private readonly key: CryptoKey,
    /** credential name → token: `operator` first, then the manifest's credentials by name. */
    readonly tokens: Record<string, string>,
  ) {}

  #formation: { door: FormationDoor; key: CryptoKey } | null = null;

  /** Verifies tokens minted under `raw` (an edge's view of one session); mints none. */
  static async verifying(raw: Uint8Array): Promise<DoorAuth> {
    return new DoorAuth(await hmacKey(raw), {});
  }

  /**
   * Mints the session's tokens under `raw`, or a random key held only in memory; a formation
   * member's door also verifies its formation's edge tokens.
   */
  static async create(
    credentials: Credential[],
    raw?: Uint8Array,
    formation?: FormationDoor,
  ): Promise<DoorAuth> {
    const key = await hmacKey(raw ?? crypto.getRandomValues(new Uint8Array(32)));
    const tokens: Record<string, string> = {};
    const all = [
      { name: "operator", scopes: [...SCOPES] },
      ...[...credentials].sort((a, b) => a.name.localeCompare(b.name)),
    ];
    for (const c of all) {
      tokens[c.name] = await sealed(key, { credential: c.name, scopes: c.scopes });
    }
    const auth = new DoorAuth(key, tokens);
    if (formation) auth.#formation = { door: formation, key: await hmacKey(formation.key) };
    return auth;
  }

  /** The grant a token carries, or null when it is not one this session (or formation) minted. */
  async verify(token: string): Promise<Grant | null> {
    const parts = token.split(".");
    if (parts.length !== 3 || parts[0] !== "mdt1") return null;
    const mac = unb64url(parts[2]);
    if (!mac) return null;
    if (await macMatches(this.key, parts[1], mac)) {
      const p = payloadOf(parts[1]);
      if (!p || typeof p.credential !== "string" || !Array.isArray(p.scopes)) return null;
      if (!p.scopes.every((s: unknown) => (SCOPES as readonly unknown[]).includes(s))) return null;
      return { credential: p.credential, scopes: new Set(p.scopes) };
    }
    const f = this.#formation;
    if (!f || !(await macMatches(f.key, parts[1], mac))) return null;
    const p = payloadOf(parts[1]);
    if (
      !p || p.formation !== f.door.formationId || typeof p.to !== "string" ||
      typeof p.credential !== "string" || !/^member:/.test(p.credential) ||
      !Array.isArray(p.scopes) ||
      !p.scopes.every((s: unknown) => (EDGE_SCOPES as readonly unknown[]).includes(s))
    ) return null;
    if (p.to !== f.door.member) {
      return { credential: p.credential, scopes: new Set(), notPermitted: true };
    }
    return { credential: p.credential, scopes: new Set(p.scopes), member: true };
  }
}

async function macMatches(key: CryptoKey, payload: string, mac: Uint8Array): Promise<boolean> {
  const expected = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, macInput(payload) as BufferSource),
  );
  return sameBytes(mac, expected);
}

function payloadOf(segment: string): Record<string, unknown> | null {
  const raw = unb64url(segment);
  if (!raw) return null;
  try {
    const p = JSON.parse(new TextDecoder().decode(raw));
    return typeof p === "object" && p !== null && !Array.isArray(p) ? p : null;
  } catch {
    return null;
  }
}
