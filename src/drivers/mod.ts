/**
 * Picks the driver a manifest names. The loop never knows which one it talks to.
 */
import { MurError } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import { createScriptedDriver, DEFAULT_SCRIPT, loadScript } from "./scripted.ts";
import type { Driver } from "./types.ts";

export async function createDriver(manifest: Manifest): Promise<Driver> {
  const inf = manifest.inference;
  switch (inf.driver) {
    case "scripted": {
      const script = inf.script ? await loadScript(inf.script) : DEFAULT_SCRIPT;
      return createScriptedDriver(script);
    }
    case "anthropic":
    case "openai":
    case "openai-compatible": {
      const http = await import("./http/mod.ts").catch(() => null);
      if (!http) {
        throw new MurError("E-RUN-005", `the ${inf.driver} driver is not available in this build`);
      }
      return http.createHttpDriver(inf);
    }
    default:
      throw new MurError(
        "E-RUN-005",
        `inference.driver '${inf.driver}' needs transport: process, which this session does not drive yet`,
      );
  }
}
