/**
 * Door tokens (README "The door": authentication): minted at launch, valid until the session ends.
 * `mdt1.<base64url(JSON {credential, scopes})>.<base64url(HMAC-SHA256)>`, MAC over
 * `murmur-door-token-v1` 0x1f <payload segment>, with a random key held only in memory.
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

export class DoorAuth {
  private constructor(
    private readonly key: CryptoKey,
    /** credential name → token: `operator` first, then the manifest's credentials by name. */
    readonly tokens: Record<string, string>,
  ) {}

  static async create(credentials: Credential[]): Promise<DoorAuth> {
    const key = await crypto.subtle.importKey(
      "raw",
      crypto.getRandomValues(new Uint8Array(32)),
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
