/**
 * Run a fake provider from the command line, e.g. to try an example capsule with no key:
 *
 *   deno run -A scripts/fakes/main.ts --provider anthropic [--port 0] [--key K] [--turns t.json]
 *
 * Prints one JSON line `{"url":"http://127.0.0.1:<port>/v1","provider":…}` once it listens, then
 * serves until SIGINT or SIGTERM. Without `--turns` it plays a demo pair for ever: a call to the
 * `date` tool, then an answer. `--turns` names a JSON file holding a FakeTurn[] (plan.ts).
 */
import { parseArgs } from "node:util";
import type { FakeTurn } from "./plan.ts";
import { type FakeProviderKind, startFakeProvider, WIRES } from "./server.ts";

const DEMO: FakeTurn[] = [
  {
    steps: [
      { thinking: "The user asked for the time; the date tool knows it." },
      { text: "Let me look at the clock. " },
      { toolCall: { id: "call_demo_1", name: "date", input: { command: "" } } },
    ],
  },
  { steps: [{ text: "That is the time on this machine." }] },
];

const { values } = parseArgs({
  args: Deno.args,
  options: {
    provider: { type: "string", default: "anthropic" },
    port: { type: "string", default: "0" },
    key: { type: "string" },
    turns: { type: "string" },
  },
});

const kind = values.provider as FakeProviderKind;
if (!(kind in WIRES)) {
  console.error(`unknown --provider '${kind}': use ${Object.keys(WIRES).join(", ")}`);
  Deno.exit(2);
}
const turns: FakeTurn[] = values.turns ? JSON.parse(await Deno.readTextFile(values.turns)) : DEMO;
const fake = startFakeProvider({
  kind,
  apiKey: values.key,
  port: Number(values.port),
  // A turns file plays once; the demo pair repeats so a capsule can run task after task.
  turns: values.turns ? turns : (_req, i) => turns[i % turns.length],
});
console.log(JSON.stringify({ url: fake.baseURL, provider: kind }));

const stop = async () => {
  await fake.close();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
