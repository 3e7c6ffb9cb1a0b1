/**
 * A terminal program driven as a person drives it: started in a tmux pane of its own tmux server
 * (`tmux -L <socket>`), keys typed with `send-keys`, what the screen shows read with
 * `capture-pane` (scrollback included). Every wait is bounded and polls the pane's content, not
 * the clock; `close()` kills what runs in the pane by its pid, then the server.
 */
import { killTree } from "./kill_tree.ts";

export interface Pane {
  /** Types `text` then Enter. */
  type(text: string): Promise<void>;
  /** Everything the pane shows and has scrolled past. */
  screen(): Promise<string>;
  /** Resolves with the screen once `re` matches it; rejects with the screen after `ms`. */
  waitFor(re: RegExp, ms?: number): Promise<string>;
  close(): Promise<void>;
}

async function tmux(socket: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("tmux", { args: ["-L", socket, ...args], stdin: "null" })
    .output();
  if (!out.success) {
    throw new Error(`tmux ${args[0]}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return new TextDecoder().decode(out.stdout);
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Starts `argv` in a 160×50 pane with `env`; after the program exits the pane prints
 * `EXIT=<code>` and stays, so a test reads how it ended.
 */
export async function startPane(argv: string[], env: Record<string, string>): Promise<Pane> {
  const socket = `mur-test-${crypto.randomUUID().slice(0, 8)}`;
  const vars = Object.entries(env).map(([k, v]) => `${k}=${quote(v)}`).join(" ");
  const line = `env ${vars} ${argv.map(quote).join(" ")}; echo EXIT=$?; sleep 600`;
  await tmux(socket, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "50", line);
  const pid = Number((await tmux(socket, "display-message", "-p", "#{pane_pid}")).trim());
  const socketPath = (await tmux(socket, "display-message", "-p", "#{socket_path}")).trim();
  const screen = () => tmux(socket, "capture-pane", "-p", "-J", "-S", "-2000");
  return {
    async type(text) {
      await tmux(socket, "send-keys", "-l", text);
      await tmux(socket, "send-keys", "Enter");
    },
    screen,
    async waitFor(re, ms = 30_000) {
      const deadline = Date.now() + ms;
      let last = "";
      while (Date.now() < deadline) {
        last = await screen();
        if (re.test(last)) return last;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the pane never showed ${re} within ${ms} ms; it shows:\n${last}`);
    },
    async close() {
      try {
        killTree(pid);
      } catch { /* already gone */ }
      await tmux(socket, "kill-server").catch(() => {});
      // The server leaves its socket file behind when killed.
      await Deno.remove(socketPath).catch(() => {});
    },
  };
}
