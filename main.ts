// Entry point: argv → src/cli. Kept tiny so `deno compile`, `deno run` and the bundle share one
// path. Run as the bundle's main.js (scripts/bundle.ts), it first says so to src/module_root.ts,
// so modules loaded on first use come from the bundle too.
import { main } from "./src/cli/main.ts";
import { enterBundle } from "./src/module_root.ts";

if (import.meta.main) {
  if (import.meta.url.endsWith(".js")) enterBundle(import.meta.url);
  Deno.exit(await main(Deno.args));
}
