/**
 * A real OTLP/HTTP receiver on loopback for tests: `POST /v1/traces` with the JSON encoding of
 * `ExportTraceServiceRequest` (what @opentelemetry/exporter-trace-otlp-http sends), flattened to
 * one record per span with its resource's attributes. `hang: true` takes requests and never
 * answers them (a collector that is up but stuck) until `close()`.
 */

export type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values: AnyValue[] };
};
interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startMs: number;
  endMs: number;
  status: { code?: number; message?: string };
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  resource: Record<string, unknown>;
}

export interface Receiver {
  url: string;
  spans: ReceivedSpan[];
  /** Requests that arrived (answered or not), with their headers. */
  requests: { path: string; headers: Headers }[];
  close(): Promise<void>;
}

function plain(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return v.arrayValue.values.map(plain);
  return undefined;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

/** The ids as hex: the JSON encoding writes them as hex strings (base64 in proto3 JSON). */
function hex(id: string | undefined): string | undefined {
  if (!id) return undefined;
  return /^[0-9a-f]+$/.test(id)
    ? id
    : Array.from(atob(id), (c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
}

// deno-lint-ignore no-explicit-any
export function decode(body: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: hex(s.traceId)!,
          spanId: hex(s.spanId)!,
          parentSpanId: hex(s.parentSpanId),
          name: s.name,
          kind: Number(s.kind ?? 0),
          startMs: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
          endMs: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
          status: s.status ?? {},
          attributes: attrs(s.attributes),
          events: (s.events ?? []).map((e: { name: string; attributes?: KeyValue[] }) => ({
            name: e.name,
            attributes: attrs(e.attributes),
          })),
          resource,
        });
      }
    }
  }
  return out;
}

export function startReceiver(o: { hang?: boolean } = {}): Receiver {
  const spans: ReceivedSpan[] = [];
  const requests: Receiver["requests"] = [];
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      requests.push({ path, headers: req.headers });
      const body = await req.text();
      if (o.hang) {
        await released;
        return new Response(null, { status: 503 });
      }
      if (req.method !== "POST" || path !== "/v1/traces") {
        return new Response("not found", { status: 404 });
      }
      spans.push(...decode(JSON.parse(body)));
      return Response.json({});
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    spans,
    requests,
    close: async () => {
      release();
      await server.shutdown();
    },
  };
}

/** A loopback port nothing listens on (bound, then closed). */
export function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
