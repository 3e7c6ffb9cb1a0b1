/**
 * No function in src/ over 80 lines without a comment saying why (docs/design.md "Habits"): every
 * function, method and arrow function is measured with Deno's own parser (a lint plugin run by
 * `Deno.lint.runPlugin`), and one over the limit needs a comment right above it that says
 * `Why long:`. `MUR_LONG_FUNCTIONS=1` prints every function over 60 lines, longest first.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
export const LIMIT = 80;
const WHY = /Why long:/;

export interface Measured {
  file: string;
  name: string;
  line: number;
  lines: number;
  explained: boolean;
}

type Node = Deno.lint.Node;

function nameOf(node: Node): string {
  const p = (node as { parent?: Node }).parent;
  if (node.type === "FunctionDeclaration" && node.id) return node.id.name;
  if (!p) return "(anonymous)";
  if (p.type === "MethodDefinition" || p.type === "Property" || p.type === "PropertyDefinition") {
    const k = p.key;
    if (k.type === "Identifier") return k.name;
    if (k.type === "PrivateIdentifier") return `#${k.name}`;
    if (k.type === "Literal") return String(k.value);
  }
  if (p.type === "VariableDeclarator" && p.id.type === "Identifier") return p.id.name;
  return "(anonymous)";
}

/** The statement-level node whose leading comment speaks for this function. */
function holderOf(node: Node): Node {
  let n = node;
  for (;;) {
    const p = (n as { parent?: Node }).parent;
    if (!p) return n;
    if (
      p.type === "MethodDefinition" || p.type === "Property" || p.type === "PropertyDefinition" ||
      p.type === "VariableDeclarator" || p.type === "VariableDeclaration" ||
      p.type === "ExportNamedDeclaration" || p.type === "ExportDefaultDeclaration"
    ) {
      n = p;
      continue;
    }
    return n;
  }
}

export function measure(file: string, source: string): Measured[] {
  const out: Measured[] = [];
  const lineAt = (offset: number) => source.slice(0, offset).split("\n").length;
  const plugin: Deno.lint.Plugin = {
    name: "length",
    rules: {
      functions: {
        create(ctx) {
          const visit = (node: Node) => {
            const [start, end] = node.range;
            const line = lineAt(start);
            const lines = lineAt(end) - line + 1;
            // The comments right above it: only whitespace between them and the function.
            const holder = holderOf(node);
            let cursor = holder.range[0];
            const comments = [];
            for (const c of ctx.sourceCode.getCommentsBefore(holder).reverse()) {
              if (source.slice(c.range[1], cursor).trim() !== "") break;
              comments.push(c);
              cursor = c.range[0];
            }
            out.push({
              file,
              name: nameOf(node),
              line,
              lines,
              explained: comments.some((c) => WHY.test(c.value)),
            });
          };
          return {
            FunctionDeclaration: visit,
            FunctionExpression: visit,
            ArrowFunctionExpression: visit,
          };
        },
      },
    },
  };
  Deno.lint.runPlugin(plugin, file, source);
  return out;
}

async function* sourceFiles(dir: URL): AsyncGenerator<URL> {
  for await (const e of Deno.readDir(dir)) {
    const u = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) yield* sourceFiles(u);
    else if (e.name.endsWith(".ts")) yield u;
  }
}

export async function measureSrc(): Promise<Measured[]> {
  const all: Measured[] = [];
  for await (const f of sourceFiles(new URL("src/", ROOT))) {
    const file = f.pathname.slice(ROOT.pathname.length);
    all.push(...measure(file, await Deno.readTextFile(f)));
  }
  return all.sort((a, b) => b.lines - a.lines);
}

Deno.test(`no src/ function over ${LIMIT} lines without a "Why long:" comment`, async () => {
  const all = await measureSrc();
  assert.ok(all.length > 500, `only ${all.length} functions measured`);
  if (Deno.env.get("MUR_LONG_FUNCTIONS")) {
    const over60 = all.filter((f) => f.lines > 60);
    console.log(`${over60.length} over 60, ${all.filter((f) => f.lines > LIMIT).length} over 80`);
    for (const f of over60) {
      console.log(`${f.lines}\t${f.file}:${f.line} ${f.name}${f.explained ? " (why)" : ""}`);
    }
  }
  const unexplained = all.filter((f) => f.lines > LIMIT && !f.explained)
    .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
  assert.deepEqual(unexplained, []);
});

Deno.test("the measure counts a function's lines and finds its why", () => {
  const body = Array.from({ length: 90 }, (_, i) => `  x += ${i};`).join("\n");
  const src = `function short() {\n  return 1;\n}\n` +
    `// Why long: one table.\nexport function long() {\n  let x = 0;\n${body}\n  return x;\n}\n` +
    `class A {\n  m() {\n${body}\n  }\n}\nconst f = () => {\n${body}\n};\n`;
  const got = measure("t.ts", src).map((f) => [f.name, f.lines, f.explained]);
  assert.deepEqual(got, [
    ["short", 3, false],
    ["long", 94, true],
    ["m", 92, false],
    ["f", 92, false],
  ]);
});
