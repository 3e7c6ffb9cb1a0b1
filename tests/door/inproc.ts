/**
 * A session and its door in this process, on a real socket, for the few door behaviours that
 * hinge on a moment inside the session's lifecycle (e.g. the closing window while the
 * on-session-end hooks run): the test holds that moment open through the Hooks interface.
 */
import { startDoor } from "../../src/door/server.ts";
import { createDriver } from "../../src/drivers/mod.ts";
import { newId } from "../../src/ids.ts";
import { loadManifest } from "../../src/manifest/load.ts";
import { type Hooks, NO_HOOKS } from "../../src/session/hooks_api.ts";
import { Session, type SessionStatus } from "../../src/session/session.ts";
import { prepareWorkdir } from "../../src/session/workdir.ts";
import { ToolBox } from "../../src/tools/toolbox.ts";
import { writeCapsule } from "../helpers/capsule.ts";

export interface InProc {
  session: Session;
  base: string;
  /** Resolves with the session's status once its lifecycle ended (the door still listens). */
  running: Promise<SessionStatus>;
  close(): Promise<void>;
}

export async function inprocCapsule(
  manifest: Record<string, unknown>,
  script: Record<string, unknown>,
  hooks: Partial<Hooks> = {},
  /** The session's and the door's stderr lines (dropped by default). */
  warn: (line: string) => void = () => {},
): Promise<InProc> {
  const dir = await writeCapsule({ manifest, script });
  const { manifest: m } = await loadManifest(dir);
  const id = newId("ses");
  const session = new Session({
    id,
    manifest: m,
    workdir: prepareWorkdir(m, id),
    driver: await createDriver(m),
    tools: new ToolBox({
      capabilities: m.capabilities,
      tools: m.tools,
      shellGraceSecs: m.lifecycle.shellGraceSecs,
    }),
    hooks: { ...NO_HOOKS, ...hooks },
    idleTimeoutMs: 30_000,
    warn,
  });
  await session.begin({});
  const door = await startDoor({
    session,
    bind: "127.0.0.1",
    port: 0,
    tools: [],
    streamsText: true,
    heartbeatMs: 15_000,
    warn,
  });
  const running = session.run();
  return {
    session,
    base: `http://127.0.0.1:${door.port}`,
    running,
    async close() {
      session.shutdown();
      await running;
      if (!session.log.closed) session.log.close();
      await door.shutdown();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
