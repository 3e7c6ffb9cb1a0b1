/**
 * The hint beside a door's 401 or 403 (E-IO-004) in `mur watch`, `stop` and `cancel`, fitted to
 * what went wrong (docs/door.md: tokens and scopes): no token at all; a token the door does not
 * know (401 `invalid_token`: mistyped, or another session's); or a known token whose credential
 * lacks the method's scope (403). A wrong token is not a scope problem, so its hint is about the
 * token.
 */
import { runningDir } from "../home/running_records.ts";

/** Where an operator finds a session's tokens. */
export function tokensAt(): string {
  return `a session's tokens are in its running record under ${runningDir()}/ and in the readiness line its mur run --json printed`;
}

export function refusalHint(status: number, method: string, presented: boolean): string {
  if (!presented) {
    return `this door requires a token: set MURMUR_DOOR_TOKEN to one holding the ${method} scope (${tokensAt()})`;
  }
  if (status === 401) {
    return `the door does not know the token presented: it was not minted by this session (mistyped, or another session's); set MURMUR_DOOR_TOKEN to one of this session's tokens (${tokensAt()})`;
  }
  return `the token presented does not hold the ${method} scope; set MURMUR_DOOR_TOKEN to one that does (${tokensAt()})`;
}
