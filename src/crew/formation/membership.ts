/**
 * What a formation member learns from its launcher (docs/crews.md: what each member is
 * given), read by `mur run` before its door starts:
 *
 * - `MURMUR_FORMATION_ID`: the formation it belongs to (goes into its running record);
 * - `MURMUR_CREW_DOOR`: the path of a private file (0600, in the formation's 0700 folder)
 *   `{"formation_id", "member", "key"}`: its roster name and the formation's MAC key, with which
 *   its door verifies the edge tokens its callers present (src/door/auth.ts). The key goes by
 *   file, never argv or environment, so no other process can read it from /proc; the launcher
 *   deletes the file once the member is ready.
 *
 * The callee side of a caller (`MURMUR_CREW_CALLEES`, `MURMUR_CREW_FILE`) is read by the member
 * tools at call time (src/crew/calls/crew_file.ts), not here.
 */
import { errorMessage, MurError } from "../../errors.ts";
import type { FormationDoor } from "../../door/auth.ts";

export const FORMATION_ID_ENV = "MURMUR_FORMATION_ID";
export const CREW_DOOR_ENV = "MURMUR_CREW_DOOR";
export const FORMATION_ID = /^frm_[0-9a-f]{32}$/;

export interface Membership {
  formationId: string;
  /** Present when the launcher handed this member a door file. */
  door?: FormationDoor;
}

/** The formation this process is a member of, or null outside any (E-RUN-046 on a bad hand-off). */
export async function readMembership(
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): Promise<Membership | null> {
  const id = env(FORMATION_ID_ENV);
  const doorPath = env(CREW_DOOR_ENV);
  if (id === undefined && doorPath === undefined) return null;
  const refuse = (why: string): never => {
    throw new MurError(
      "E-RUN-046",
      `this member's formation hand-off is not usable: ${why}`,
      "MURMUR_FORMATION_ID and MURMUR_CREW_DOOR are set by `mur run --roster`; unset them to run alone",
    );
  };
  if (id === undefined || !FORMATION_ID.test(id)) {
    return refuse(`${FORMATION_ID_ENV} is not frm_ and 32 lowercase hex digits`);
  }
  if (doorPath === undefined) return { formationId: id };
  let raw: unknown;
  try {
    raw = JSON.parse(await Deno.readTextFile(doorPath));
  } catch (e) {
    return refuse(`${CREW_DOOR_ENV} ${doorPath} could not be read: ${errorMessage(e)}`);
  }
  const v = raw as Record<string, unknown>;
  const key = typeof v?.key === "string" ? fromB64url(v.key) : null;
  if (
    v?.formation_id !== id || typeof v.member !== "string" ||
    !/^[a-z][a-z0-9-]{0,31}$/.test(v.member) ||
    !key || key.length !== 32
  ) {
    return refuse(`${doorPath} is not this formation's door file`);
  }
  return { formationId: id, door: { formationId: id, member: v.member, key } };
}

function fromB64url(s: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return null;
  try {
    return Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
