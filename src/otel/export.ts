/**
 * The OpenTelemetry export of one session (docs/opentelemetry.md): the official JS SDK's tracer
 * provider, a batch span processor with a bounded queue, and the OTLP/HTTP (JSON) exporter, fed by
 * the session's trace lines (./spans.ts) through the trace writer's one observer.
 *
 * A collector that is down, slow or refusing never holds the session up: spans are handed to the
 * batch queue (2048 at most; beyond that the SDK drops them) and sent in the background; at the
 * session's end one flush waits at most `FLUSH_MS`. What did not arrive is counted: the
 * `otel_export` trace line, written just before `session_end`, says how many spans were made,
 * exported and dropped (queue full, collector unreachable, refused, or too slow).
 */
import type { A2aCallRecord } from "../a2a/call_record.ts";
import { trace } from "@opentelemetry/api";
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { ExportResult } from "@opentelemetry/core";
import { MUR_VERSION } from "../version.ts";
import type { OtelConfig } from "./config.ts";
import type { HarnessTelemetry } from "../drivers/process/types.ts";
import type { HookCallRecord } from "../hooks/call.ts";
import { type TaskContent, type TraceLine, TraceSpans } from "./spans.ts";

/** The longest the session's end waits for the last spans to reach the collector. */
export const FLUSH_MS = 2000;
/** One export request's deadline (a collector that never answers). */
const EXPORT_TIMEOUT_MS = 1500;
const MAX_QUEUE = 2048;
const MAX_BATCH = 512;

/** What the `otel_export` trace line says. */
export interface OtelReport {
  endpoint: string;
  spans: number;
  exported: number;
  dropped: number;
}

/** Counts what the collector accepted; a failed or timed-out request's spans are not counted. */
class CountingExporter implements SpanExporter {
  exported = 0;
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.exported += spans.length;
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

export class OtelExport {
  readonly #provider: TracerProvider;
  readonly #exporter: CountingExporter;
  readonly #spans: TraceSpans;
  #finished: Promise<OtelReport> | null = null;

  constructor(
    readonly config: OtelConfig,
    capsule: { name: string; version: string },
    taskContent?: TaskContent,
  ) {
    this.#exporter = new CountingExporter(
      new OTLPTraceExporter({
        url: config.url,
        headers: config.headers,
        timeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    );
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({
        [ATTR_SERVICE_NAME]: capsule.name,
        [ATTR_SERVICE_VERSION]: capsule.version,
        "mur.version": MUR_VERSION,
      }),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: this.#exporter,
          maxQueueSize: MAX_QUEUE,
          maxExportBatchSize: MAX_BATCH,
          scheduledDelayMillis: 500,
          exportTimeoutMillis: EXPORT_TIMEOUT_MS,
        }),
      ],
    });
    this.#spans = new TraceSpans(this.#provider.getTracer("mur", MUR_VERSION), {
      content: config.content,
      taskContent,
      capsule: capsule.name,
    });
  }

  /** The trace writer's observer: one trace line, as written. */
  line(line: TraceLine): void {
    if (this.#finished) return;
    this.#spans.line(line);
  }

  /**
   * The W3C `traceparent` of a task's span (the session's, before the task has one), for a
   * harness whose own spans should join the session's trace.
   */
  traceparent(taskId: string): string | undefined {
    const ctx = this.#spans.taskContext(taskId);
    if (!ctx || !trace.getSpan(ctx)) return undefined;
    // A propagator of its own: mur registers no OpenTelemetry globals.
    const carrier: Record<string, string> = {};
    new W3CTraceContextPropagator().inject(ctx, carrier, {
      set: (c, k, v) => (c[k] = v),
    });
    return carrier.traceparent;
  }

  /**
   * A finished A2A request: a crew call's to a member (`taskId` the calling task) or one to this
   * door (under its task while that runs). docs/opentelemetry.md "A2A spans".
   */
  a2a(r: A2aCallRecord, taskId = r.taskId): void {
    if (this.#finished) return;
    this.#spans.a2a(r, taskId);
  }

  /** A finished hook call (src/hooks/call.ts `onCall`): its span. */
  hookCall(call: HookCallRecord): void {
    if (this.#finished) return;
    this.#spans.hookCall(call);
  }

  /** What a harness running this task needs to send its spans into the session's trace. */
  harnessTelemetry(taskId: string): HarnessTelemetry | undefined {
    const traceparent = this.traceparent(taskId);
    if (!traceparent || this.#finished) return undefined;
    return {
      traceparent,
      tracesUrl: this.config.url,
      headers: this.config.headers,
      content: this.config.content,
    };
  }

  /**
   * Ends the session span (and any left open) at `at`, sends what is queued, waiting at most
   * `FLUSH_MS`, and reports. Called once, before `session_end` is written; later calls get the
   * same report.
   */
  finish(at: number, exitStatus: string): Promise<OtelReport> {
    this.#finished ??= (async () => {
      this.#spans.endAll(at, exitStatus);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<void>((r) => (timer = setTimeout(r, FLUSH_MS)));
      try {
        await Promise.race([this.#provider.forceFlush().catch(() => {}), deadline]);
      } finally {
        clearTimeout(timer);
      }
      // Whatever is still in flight is not waited for (and counted as dropped).
      this.#provider.shutdown().catch(() => {});
      const spans = this.#spans.started;
      const exported = Math.min(this.#exporter.exported, spans);
      return { endpoint: this.config.url, spans, exported, dropped: spans - exported };
    })();
    return this.#finished;
  }
}
