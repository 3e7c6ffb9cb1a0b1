/**
 * Why `mur edge` could not listen, as a coded error (E-EDGE-002) like `mur run`'s door's E-RUN-010
 * (src/door/server.ts `listen`), not an uncaught AddrInUse with a stack through the bundle.
 */
import { errorMessage, MurError } from "../errors.ts";

/** E-EDGE-002, as `mur run`'s door says E-RUN-010: a port in use, or an address not this host's. */
export function listenError(o: { bind: string; port: number }, e: unknown): MurError {
  const at = `${o.bind.includes(":") ? `[${o.bind}]` : o.bind}:${o.port}`;
  return e instanceof Deno.errors.AddrInUse
    ? new MurError(
      "E-EDGE-002",
      `mur edge could not listen on ${at}: the port is already in use`,
      "choose another --port, or 0 for an OS-assigned port",
    )
    : new MurError(
      "E-EDGE-002",
      `mur edge could not listen on ${at}: ${errorMessage(e)}`,
      "check --bind: it must be an address of this machine",
    );
}
