/**
 * The scale rows of `deno task bench` (issue 18): what a unit of work costs as the work grows.
 * Each row is mur's figure beside a baseline measured in the same run, as a ratio, with the
 * target it is judged against. Rows that cannot be measured say why instead of a figure.
 */

export interface ScaleRow {
  label: string;
  /** mur's figure (the numerator). */
  mur: number;
  /** The baseline's figure (the denominator) and what it is. */
  base: number;
  baseLabel: string;
  unit: string;
  digits: number;
  /** Judged on mur / base: at most this. */
  target?: number;
  /** Judged on mur's own figure: at most this, in `unit` (a goal with no baseline to it). */
  limit?: number;
  /** Why the row has no figure, or what to read beside it. */
  note?: string;
}

export class Scale {
  readonly rows: ScaleRow[] = [];
  /** Facts for the closing paragraph (what stands in the way, what was seen). */
  readonly facts: string[] = [];
  /** Sections of their own after the table (markdown, each with its `##` heading). */
  readonly sections: string[] = [];
  onAdd: (r: ScaleRow) => void = () => {};

  add(r: ScaleRow): void {
    this.rows.push(r);
    this.onAdd(r);
  }

  missing(label: string, why: string): void {
    this.add({
      label,
      mur: NaN,
      base: NaN,
      baseLabel: "—",
      unit: "",
      digits: 0,
      note: `not available: ${why.replace(/\s+/g, " ").trim().slice(0, 240)}`,
    });
  }
}

const fmt = (v: number, digits: number) =>
  Number.isFinite(v)
    ? v.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "—";

export function ratioOf(r: ScaleRow): number {
  return Number.isFinite(r.mur) && Number.isFinite(r.base) && r.base !== 0 ? r.mur / r.base : NaN;
}

function verdict(r: ScaleRow): string {
  if (r.limit !== undefined) {
    if (!Number.isFinite(r.mur)) return `≤ ${r.limit} ${r.unit} — not measured`;
    return `≤ ${r.limit} ${r.unit} — ${r.mur <= r.limit ? "met" : "not met"}`;
  }
  const q = ratioOf(r);
  if (r.target === undefined) return "—";
  if (!Number.isFinite(q)) return `≤ ${r.target}× — not measured`;
  return `≤ ${r.target}× — ${q <= r.target ? "met" : "not met"}`;
}

/** The scale table, markdown. */
export function scaleTable(s: Scale): string {
  const lines = [
    "| measure | mur | baseline (same run) | mur / baseline | target |",
    "| --- | ---: | --- | ---: | --- |",
  ];
  const notes: string[] = [];
  for (const r of s.rows) {
    let note = "";
    if (r.note) {
      let i = notes.indexOf(r.note);
      if (i === -1) i = notes.push(r.note) - 1;
      note = ` [${i + 1}]`;
    }
    const q = ratioOf(r);
    lines.push(
      `| ${r.label}${note} | ${fmt(r.mur, r.digits)} ${r.unit} | ${r.baseLabel}: ${
        fmt(r.base, r.digits)
      } ${r.unit} | ${Number.isFinite(q) ? `${q.toFixed(2)}×` : "—"} | ${verdict(r)} |`,
    );
  }
  const out = [lines.join("\n")];
  if (notes.length) out.push(notes.map((n, i) => `${i + 1}. ${n}`).join("\n"));
  return out.join("\n\n");
}

/** The scale section of BENCHMARKS.md. */
export function scaleMarkdown(s: Scale, turnsFlag: number): string {
  const facts = s.facts.length
    ? `\n\nSeen during the runs:\n\n${s.facts.map((f) => `- ${f}`).join("\n")}`
    : "";
  return `## Scale: cost per unit of work (issue 18)

Each a real \`mur run\` of a scripted capsule (scripts/bench/round_scale.ts), after the rounds above,
on core 0 (the same pinning). Per-turn time is the gap between consecutive \`inference\` trace lines;
"runtime only" subtracts the turn's tool call's own \`duration_ms\` (its process start, run and
output). Trace times are whole milliseconds: the whole turn's tenths are means trimmed of their
highest and lowest tenth; mur's own part, well under a millisecond, is each tenth's plain mean
(whole-millisecond readings average out to the true time over ≥ 100 turns), with turns more than
4 ms from the tenth's median counted apart as stalls. The turn session runs under V8's
\`--trace-gc\` for the live heap after each major collection. ${
    turnsFlag.toLocaleString("en")
  } turns here${
    turnsFlag === 10_000 ? "" : " (the default is 10,000; `--quick` runs 200, `--turns N` any)"
  }.

${scaleTable(s)}${facts}
${s.sections.map((x) => `\n${x.trimEnd()}\n`).join("")}`;
}
