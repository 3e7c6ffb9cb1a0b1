/**
 * `mur` with one fault injected from outside, for fault_test.ts: main.ts's entry point after
 * patching `ToolBox.dispatch`, so that the session's first tool call also raises an error nobody
 * catches — the way a bug in a callback, a timer or a forgotten promise would. `MUR_TEST_FAULT`
 * (read here only; mur itself has no such knob) picks the fault:
 *
 * - `throw`: an exception thrown from a timer while the tool runs;
 * - `reject`: a rejected promise nobody awaits;
 * - `hang`: `throw`, and the tool call never returns, whatever cancels it.
 */
import { main } from "../../src/cli/main.ts";
import { ToolBox } from "../../src/tools/toolbox.ts";

const fault = Deno.env.get("MUR_TEST_FAULT") ?? "throw";
const dispatch = ToolBox.prototype.dispatch;
let injected = false;
ToolBox.prototype.dispatch = function (call, ctx) {
  if (!injected) {
    injected = true;
    const boom = new Error(`injected fault (${fault})`);
    if (fault === "reject") Promise.reject(boom);
    else {
      setTimeout(() => {
        throw boom;
      }, 50);
    }
    if (fault === "hang") return new Promise(() => {});
  }
  return dispatch.call(this, call, ctx);
};

Deno.exit(await main(Deno.args));
