/** A normalized `transport: process` manifest for in-process session tests. */
import type { LifecycleConfig, Manifest } from "../../src/manifest/types.ts";

export function processManifest(dir: string, lifecycle: Partial<LifecycleConfig> = {}): Manifest {
  return {
    name: "p",
    version: "1",
    path: `${dir}/murmur.yaml`,
    dir,
    inference: {
      transport: "process",
      driver: "claude-code",
      maxTurns: 10,
      maxTokens: 1000,
      systemPromptSource: "none",
      idleTimeoutSecs: 120,
    },
    lifecycle: {
      taskAcceptance: "queue",
      afterTask: "sleep",
      queueDepth: 1,
      conversation: "stateless",
      maxTaskReopens: 1,
      shellGraceSecs: 10,
      ...lifecycle,
    },
    context: { seedBudget: 0.1, seedOverflowMargin: 0.1, compactionThreshold: 0.98 },
    network: { retriedSends: "replay" },
    capabilities: { shell: { allow: [] }, filesystem: { readOnly: [] } },
    observability: { otelContent: false },
    tools: [],
    hooks: [],
  };
}
