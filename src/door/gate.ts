/**
 * The token gate (docs/door.md: authentication): on an authenticated door, a request is
 * admitted only with `Authorization: Bearer <token>` this session minted, before anything of it
 * is read; a method the token's credential does not reach is 403 with the scope it lacks.
 */
import type { DoorAuth, Grant } from "./auth.ts";
import { json } from "./responses.ts";

/**
 * How a refusal is written: the JSON-RPC door's `{error, message}` body, or a binding's own form
 * (the HTTP+JSON binding's google.rpc.Status, rest/checks.ts). The status, the refusal and the
 * `WWW-Authenticate` header are the same in every form.
 */
export type RefusalForm = (
  status: 401 | 403,
  error: "unauthenticated" | "invalid_token" | "insufficient_scope" | "not_permitted",
  message: string,
  headers: Record<string, string>,
) => Response;

const plainForm: RefusalForm = (status, error, message, headers) =>
  json(status, JSON.stringify({ error, message }), headers);

export class Gate {
  readonly #realm: string;

  /**
   * `auth` null: a public door, every request admitted with no grant. `whereTokens` ends every
   * 401's message: where a caller finds a token for this door (a formation member's door says
   * its running record, src/door/server.ts).
   */
  constructor(
    readonly auth: DoorAuth | null,
    capsuleName: string,
    readonly whereTokens?: string,
  ) {
    this.#realm = capsuleName.replace(/["\\]/g, "_");
  }

  #where(message: string): string {
    return this.whereTokens ? `${message}; ${this.whereTokens}` : message;
  }

  /** The caller's grant (null on a public door), or the 401 refusal. */
  async admit(
    req: Request,
    form: RefusalForm = plainForm,
  ): Promise<{ grant: Grant | null } | Response> {
    if (!this.auth) return { grant: null };
    const header = req.headers.get("authorization");
    if (header === null) {
      return form(
        401,
        "unauthenticated",
        this.#where(
          "this door takes a token this capsule's runtime minted, as Authorization: Bearer <token>",
        ),
        { "www-authenticate": `Bearer realm="${this.#realm}"` },
      );
    }
    const m = /^bearer\s+(\S+)$/i.exec(header.trim());
    const grant = m && !header.includes(",") ? await this.auth.verify(m[1]) : null;
    if (!grant) {
      return form(
        401,
        "invalid_token",
        this.#where("the Authorization header does not present a token this session minted"),
        { "www-authenticate": `Bearer realm="${this.#realm}", error="invalid_token"` },
      );
    }
    if (grant.notPermitted) {
      // An edge token of this formation, for another member's door (docs/crews.md: tokens).
      const who = grant.credential.replace(/^member:/, "");
      return form(403, "not_permitted", `member '${who}' may not call this capsule`, {
        "www-authenticate": `Bearer realm="${this.#realm}", error="insufficient_scope"`,
      });
    }
    return { grant };
  }

  /** 403 unless the grant (if any) reaches `scope`. */
  require(grant: Grant | null, scope: string, form: RefusalForm = plainForm): Response | undefined {
    if (!grant || grant.scopes.has(scope)) return undefined;
    return form(
      403,
      "insufficient_scope",
      `credential '${grant.credential}' does not reach ${scope}`,
      {
        "www-authenticate":
          `Bearer realm="${this.#realm}", error="insufficient_scope", scope="${scope}"`,
      },
    );
  }
}
