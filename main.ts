// Entry point: argv → src/cli. Kept tiny so `deno compile` and `deno run` share one path.
import { main } from "./src/cli/main.ts";

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
