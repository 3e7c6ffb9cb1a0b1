/**
 * Door tokens (README "The door": authentication): minted at launch, valid until the session ends.
 * `mdt1.<base64url(JSON {credential, scopes})>.<base64url(HMAC-SHA256)>`, MAC over
 * `murmur-door-token-v1` 0x1f <payload segment>, with a random key held only in memory — or, on a
 * capsule that publishes to a cluster (README "Beyond one machine"), a key derived from the
 * operator's shared `MURMUR_CLUSTER_KEY` and the session id, which `mur edge` derives the same way
 * to verify the same tokens. The shared key is never written anywhere by mur, Redis included.
 */
import { SCOPES as DOOR_SCOPES } from "../a2a/methods.ts";
import type { Credential } from "../manifest/types.ts";

export const SCOPES = DOOR_SCOPES;

export interface Grant {
  credential: string;
  scopes: Set<string>;
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

  /** Verifies tokens minted under `raw` (an edge's view of one session); mints none. */
  static async verifying(raw: Uint8Array): Promise<DoorAuth> {
    const key = await crypto.subtle.importKey(
      "raw",
      raw as BufferSource,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    return new DoorAuth(key, {});
  }

  /** Mints the session's tokens under `raw`, or a random key held only in memory. */
  static async create(credentials: Credential[], raw?: Uint8Array): Promise<DoorAuth> {
    const key = await crypto.subtle.importKey(
      "raw",
      (raw ?? crypto.getRandomValues(new Uint8Array(32))) as BufferSource,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const tokens: Record<string, string> = {};
    const all = [
      { name: "operator", scopes: [...SCOPES] },
      ...[...credentials].sort((a, b) => a.name.localeCompare(b.name)),
    ];
    for (const c of all) {
      const payload = b64url(enc.encode(JSON.stringify({ credential: c.name, scopes: c.scopes })));
      const mac = new Uint8Array(
        await crypto.subtle.sign("HMAC", key, macInput(payload) as BufferSource),
      );
      tokens[c.name] = `mdt1.${payload}.${b64url(mac)}`;
    }
    return new DoorAuth(key, tokens);
  }

  /** The grant a token carries, or null when it is not one this session minted. */
  async verify(token: string): Promise<Grant | null> {
    const parts = token.split(".");
    if (parts.length !== 3 || parts[0] !== "mdt1") return null;
    const mac = unb64url(parts[2]);
    if (!mac) return null;
    const expected = new Uint8Array(
      await crypto.subtle.sign("HMAC", this.key, macInput(parts[1]) as BufferSource),
    );
    if (!sameBytes(mac, expected)) return null;
    const raw = unb64url(parts[1]);
    if (!raw) return null;
    try {
      const p = JSON.parse(new TextDecoder().decode(raw));
      if (typeof p.credential !== "string" || !Array.isArray(p.scopes)) return null;
      if (!p.scopes.every((s: unknown) => (SCOPES as readonly unknown[]).includes(s))) return null;
      return { credential: p.credential, scopes: new Set(p.scopes) };
    } catch {
      return null;
    }
  }
}
