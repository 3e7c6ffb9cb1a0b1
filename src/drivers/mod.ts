/**
 * Picks the driver a manifest names. The loop never knows which one it talks to.
 */
import { MurError } from "../errors.ts";
import { lazyImport } from "../lazy.ts";
import type { Manifest } from "../manifest/types.ts";
import { createScriptedDriver, DEFAULT_SCRIPT, loadScript } from "./scripted.ts";
import type { AnyDriver } from "./types.ts";
import type { HarnessTelemetry } from "./process/types.ts";

/** Where a harness (`transport: process`) runs and keeps its threaded contexts' session ids. */
export interface HarnessPlace {
  /** The tools' working directory: the harness runs there. */
  workdir: string;
  /** JSON file mapping a threaded context to its harness session (created on first write). */
  sessionStorePath?: string;
  /** The session's OpenTelemetry export, for a task: what the harness's spans join. */
  telemetry?: (taskId: string) => HarnessTelemetry | undefined;
}

export async function createDriver(
  manifest: Manifest,
  place?: HarnessPlace,
): Promise<AnyDriver> {
  const inf = manifest.inference;
  if (inf.transport === "process") {
    if (!place) {
      throw new MurError(
        "E-RUN-005",
        `inference.driver '${inf.driver}' runs a harness, which needs the session's workdir`,
      );
    }
    // Loaded only for a harness: the process transport and the MCP SDK (src/lazy.ts).
    const { createHarnessDriver } = await lazyImport<typeof import("./process/mod.ts")>(
      "drivers/process/mod.ts",
    );
    return createHarnessDriver(inf, {
      workdir: place.workdir,
      baseDir: manifest.dir,
      sessionStorePath: place.sessionStorePath,
      telemetry: place.telemetry,
      mcpServers: manifest.mcpServers,
    });
  }
  switch (inf.driver) {
    case "scripted": {
      const script = inf.script ? await loadScript(inf.script) : DEFAULT_SCRIPT;
      return createScriptedDriver(script);
    }
    case "anthropic":
    case "openai":
    case "openai-compatible": {
      // Loaded only for an HTTP provider: the AI SDK and its providers (src/lazy.ts).
      const http = await lazyImport<typeof import("./http/mod.ts")>(
        "drivers/http/mod.ts",
      ).catch(() => null);
      if (!http) {
        throw new MurError("E-RUN-005", `the ${inf.driver} driver is not available in this build`);
      }
      return http.createHttpDriver(inf);
    }
    default:
      throw new MurError(
        "E-RUN-005",
        `inference.driver '${inf.driver}' needs inference.transport: process`,
      );
  }
}
