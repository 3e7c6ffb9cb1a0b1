/** What the rounds record: per-round values by (column, measure), and why a cell is empty. */
import { median } from "./stats.ts";

export type Column = "raw" | "peer-msg" | "peer-meta" | "mur-watch" | "mur-sub";

export type Measure =
  | "tp1"
  | "tp10"
  | "tp100"
  | "tp1000"
  | "p50"
  | "p99"
  | "idleKiB"
  /** The same endpoint's stream on the HTTP+JSON binding (REST), per idle connection. */
  | "idleRestKiB"
  /** The JS heap's share of those (after a full GC): what the connection's objects hold. */
  | "idleHeapKiB"
  | "idleRestHeapKiB"
  | "stallMiB"
  | "stallSmallMiB"
  | "replayMs"
  | "coldMs"
  /** Server CPU time per delivered event over a flood, µs: no client ceiling hides it. */
  | "cpu1"
  /** The same over a fresh process's first K=1 flood of that endpoint (its code not settled). */
  | "cpu1first"
  | "cpu10"
  | "cpu100"
  | "cpu1000"
  /** The load generator's CPU time during a K=100 / 1,000 flood, % of its window (the ceiling?). */
  | "lg100"
  | "lg1000";

export class Results {
  #values = new Map<string, number[]>();
  #notes = new Map<string, string>();
  #delivered = new Map<string, number>();
  /** Called with each recorded figure, for the log. */
  onAdd: (c: Column, m: Measure, v: number) => void = () => {};
  /** Extra facts per (column, measure) for the closing notes, e.g. N per run. */
  readonly facts: string[] = [];

  #key(c: Column, m: Measure): string {
    return `${c}|${m}`;
  }

  add(c: Column, m: Measure, v: number): void {
    const k = this.#key(c, m);
    if (!this.#values.has(k)) this.#values.set(k, []);
    this.#values.get(k)!.push(v);
    this.onAdd(c, m, v);
  }

  /** The smallest fraction of a run's events one client received, kept per (c, m). */
  delivered(c: Column, m: Measure, fraction: number): void {
    const k = this.#key(c, m);
    this.#delivered.set(k, Math.min(fraction, this.#delivered.get(k) ?? 1));
  }

  /** 1 when every client received every event in every round. */
  deliveredFraction(c: Column, m: Measure): number {
    return this.#delivered.get(this.#key(c, m)) ?? 1;
  }

  /** Why (c, m) has no figure; the first reason wins. */
  note(c: Column, m: Measure, why: string): void {
    const k = this.#key(c, m);
    if (!this.#notes.has(k)) this.#notes.set(k, why.replace(/\s+/g, " ").trim().slice(0, 240));
  }

  values(c: Column, m: Measure): number[] {
    return this.#values.get(this.#key(c, m)) ?? [];
  }

  median(c: Column, m: Measure): number {
    return median(this.values(c, m));
  }

  why(c: Column, m: Measure): string | undefined {
    return this.#notes.get(this.#key(c, m));
  }
}
