/**
 * The token gate (README "The door": authentication): on an authenticated door, a request is
 * admitted only with `Authorization: Bearer <token>` this session minted, before anything of it
 * is read; a method the token's credential does not reach is 403 with the scope it lacks.
 */
import type { DoorAuth, Grant } from "./auth.ts";
import { json } from "./responses.ts";

export class Gate {
  readonly #realm: string;

  /** `auth` null: a public door, every request admitted with no grant. */
  constructor(readonly auth: DoorAuth | null, capsuleName: string) {
    this.#realm = capsuleName.replace(/["\\]/g, "_");
  }

  /** The caller's grant (null on a public door), or the 401 refusal. */
  async admit(req: Request): Promise<{ grant: Grant | null } | Response> {
    if (!this.auth) return { grant: null };
    const header = req.headers.get("authorization");
    if (header === null) {
      return json(
        401,
        JSON.stringify({
          error: "unauthenticated",
          message:
            "this door takes a token this capsule's runtime minted, as Authorization: Bearer <token>",
        }),
        { "www-authenticate": `Bearer realm="${this.#realm}"` },
      );
    }
    const m = /^bearer\s+(\S+)$/i.exec(header.trim());
    const grant = m && !header.includes(",") ? await this.auth.verify(m[1]) : null;
    if (!grant) {
      return json(
        401,
        JSON.stringify({
          error: "invalid_token",
          message: "the Authorization header does not present a token this session minted",
        }),
        { "www-authenticate": `Bearer realm="${this.#realm}", error="invalid_token"` },
      );
    }
    return { grant };
  }

  /** 403 unless the grant (if any) reaches `scope`. */
  require(grant: Grant | null, scope: string): Response | undefined {
    if (!grant || grant.scopes.has(scope)) return undefined;
    return json(
      403,
      JSON.stringify({
        error: "insufficient_scope",
        message: `credential '${grant.credential}' does not reach ${scope}`,
      }),
      {
        "www-authenticate":
          `Bearer realm="${this.#realm}", error="insufficient_scope", scope="${scope}"`,
      },
    );
  }
}
