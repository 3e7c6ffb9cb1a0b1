/**
 * The operator's approval token on a public door (docs/approvals.md "Who may approve"). A door
 * without `network.authentication` cannot tell callers apart, and a model's own shell shares the
 * host network under `scoped` containment (docs/containment.md), so a caller's position proves
 * nothing: a capsule with `approvals:` mints this token at launch (as src/door/auth.ts mints an
 * authenticated door's `operator` token, under a random key held only in memory) and puts it in
 * the running record as `approval_token` (src/home/running_records.ts; mur home is hidden from a
 * contained tool). Only an approval answer needs it; the rest of a public door stays public.
 */
import { DoorAuth } from "./auth.ts";

export class ApprovalToken {
  private constructor(private readonly auth: DoorAuth, readonly token: string) {}

  static async mint(): Promise<ApprovalToken> {
    const auth = await DoorAuth.create([]);
    return new ApprovalToken(auth, auth.tokens.operator);
  }

  /** Whether `req` presents this token as its one `Authorization: Bearer`. */
  async presentedBy(req: Request): Promise<boolean> {
    const header = req.headers.get("authorization");
    if (header === null || header.includes(",")) return false;
    const m = /^bearer\s+(\S+)$/i.exec(header.trim());
    return m !== null && (await this.auth.verify(m[1]))?.credential === "operator";
  }
}
