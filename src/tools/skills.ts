/**
 * Skills (docs/manifest.md "artifacts"): text the model reads by calling it as a tool with no input; the text
 * is the call's result. An operator skill (declared under `artifacts:`) is trusted and returned as
 * written; a runtime skill (a `skill.md` that appeared under `workdir/tools/<name>/`, written by an
 * `on-stage` hook or during the session) is untrusted and fenced `skill:<name>`. The shelf is
 * looked at again on every offer and every call, so a skill written during the session is
 * callable at once and offered from the next turn on.
 */
import type { SkillConfig } from "../manifest/types.ts";
import { TOOL_NAME } from "../manifest/schema.ts";
import { SKILL_FILE, skillDescription } from "../manifest/artifacts.ts";
import { errorMessage } from "../errors.ts";
import { fence } from "./fence.ts";
import { notReached, type SkillCall, type Tool, type ToolResult } from "./types.ts";
import { existsSync as exists } from "../path_exists.ts";

const NO_INPUT = { type: "object", properties: {} } as const;

export class SkillTool implements Tool {
  readonly inputSchema: Record<string, unknown> = { ...NO_INPUT };
  readonly skill: SkillCall;

  constructor(
    readonly name: string,
    readonly description: string,
    readonly version: string,
    /** The operator's text (read at load), or the runtime skill's file (read at each call). */
    readonly text: { fixed: string } | { file: string },
  ) {
    this.skill = "fixed" in text
      ? { origin: "operator", trust: "trusted" }
      : { origin: "runtime", trust: "untrusted" };
  }

  call(): Promise<ToolResult> {
    let text: string;
    if ("fixed" in this.text) text = this.text.fixed;
    else {
      try {
        text = Deno.readTextFileSync(this.text.file);
      } catch (e) {
        return Promise.resolve({
          ...notReached(`skill '${this.name}' cannot be read: ${errorMessage(e)}`),
          skill: this.skill,
        });
      }
    }
    const runtime = this.skill.origin === "runtime";
    const source = `skill:${this.name}`;
    return Promise.resolve({
      content: runtime ? fence(source, text) : text,
      fenceSource: runtime ? source : null,
      isError: false,
      exitCode: null,
      truncated: false,
      durationMs: 0,
      images: [],
      skill: this.skill,
    });
  }
}

export class SkillShelf {
  readonly #operator: SkillTool[];
  /** Every operator skill's name, the prompt-bound one too: never a runtime skill's. */
  readonly #operatorNames: Set<string>;

  /**
   * `toolsDir`: `workdir/tools/`, where runtime skills appear (null: none are looked for).
   * `taken`: names another tool already holds (a declared tool wins over a runtime skill).
   */
  constructor(
    operator: SkillConfig[],
    private readonly toolsDir: string | null,
    private readonly taken: (name: string) => boolean = () => false,
  ) {
    this.#operatorNames = new Set(operator.map((s) => s.name));
    this.#operator = operator.filter((s) => !s.promptBound).map((s) =>
      new SkillTool(s.name, s.description, s.version, { fixed: s.text })
    );
  }

  /** The skills offered, operator ones first (declaration order), then runtime ones by name. */
  list(): SkillTool[] {
    return [...this.#operator, ...this.#runtime()];
  }

  /** The skill a call names: an operator one, else a `skill.md` under `workdir/tools/<name>/`. */
  find(name: string): SkillTool | undefined {
    const own = this.#operator.find((s) => s.name === name);
    if (own) return own;
    if (!this.#runtimeName(name)) return undefined;
    return this.#runtimeSkill(name) ?? undefined;
  }

  #runtimeName(name: string): boolean {
    return this.toolsDir !== null && TOOL_NAME.test(name) && !this.#operatorNames.has(name) &&
      !this.taken(name);
  }

  #runtimeSkill(name: string): SkillTool | null {
    const file = `${this.toolsDir}/${name}/${SKILL_FILE}`;
    let text: string;
    try {
      // A folder with a murmur.yaml is a packaged tool, not a skill.
      if (exists(`${this.toolsDir}/${name}/murmur.yaml`)) return null;
      text = Deno.readTextFileSync(file);
    } catch {
      return null;
    }
    return new SkillTool(name, skillDescription(name, text), "runtime", { file });
  }

  #runtime(): SkillTool[] {
    if (this.toolsDir === null) return [];
    const names: string[] = [];
    try {
      for (const e of Deno.readDirSync(this.toolsDir)) {
        if (e.isDirectory && this.#runtimeName(e.name)) names.push(e.name);
      }
    } catch {
      return []; // no tools folder: no runtime skills
    }
    return names.sort().flatMap((n) => this.#runtimeSkill(n) ?? []);
  }
}
