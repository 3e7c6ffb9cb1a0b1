/**
 * A bare `Deno.serve` process (as raw_server.ts's readiness line) that first imports the module
 * named by its argument and runs nothing of it: what a module graph costs a process by itself
 * (round_memory.ts). `deno run -A --no-config bare_import.ts file:///…/vendor/zod/zod.js`, or
 * `… file:///…/.cache/bundle/src/cli/run.js`.
 */
const spec = Deno.args[0];
// Kept reachable, as a running program keeps what it imported.
const held: unknown[] = [];
if (spec) held.push(await import(spec));
Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: (addr) =>
    console.log(
      JSON.stringify({ url: `127.0.0.1:${addr.port}`, pid: Deno.pid, held: held.length }),
    ),
}, () => new Response(null, { status: 404 }));
