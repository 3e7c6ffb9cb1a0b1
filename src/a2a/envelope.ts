/**
 * The JSON-RPC 2.0 envelope every answer of the door wears (docs/protocol.md): a unary answer, an
 * error, and each event of a stream (`data: ` + the envelope of one StreamResponse). One function
 * writes it, so the door's answers and the stream's frames cannot differ in their bytes.
 */

export type RpcId = string | number | null;

/** `{"jsonrpc":"2.0","id":<id>,"<member>":` — the envelope up to its member's value. */
export function envelopeHead(id: RpcId, member: "result" | "error"): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"${member}":`;
}

/** The whole envelope around `value` (already a plain JSON value). */
export function envelope(id: RpcId, member: "result" | "error", value: unknown): string {
  return `${envelopeHead(id, member)}${JSON.stringify(value)}}`;
}
