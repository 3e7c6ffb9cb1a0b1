/**
 * ProtoJSON field names: A2A's JSON takes a field in lowerCamelCase or in its proto snake_case
 * name (docs/protocol.md). Read by the door and by the push configs it stores.
 */

/** ProtoJSON: read `historyLength` or `history_length`. */
export function param(params: Record<string, unknown>, camel: string): unknown {
  if (camel in params) return params[camel];
  const snake = camel.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
  return params[snake];
}
