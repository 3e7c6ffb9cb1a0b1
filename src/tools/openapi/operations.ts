/**
 * An OpenAPI 3 document's operations as tools (docs/mcp.md "OpenAPI services"): each named
 * `openapi__<service>__<operationId>` (an operation without an id: `<method>_<path>`, every
 * character providers do not take in a name made `_`), its input schema an object of its path,
 * query and header parameters (each with its own schema) and, with a JSON request body, `body`.
 * `operations:` picks which are offered; at most MAX_OPERATIONS are. What was left out is said in
 * `notes`.
 */
import type { OpenApiService } from "../../manifest/openapi_services.ts";
import type { JsonSchema } from "../types.ts";

export const MAX_OPERATIONS = 128;
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface Param {
  name: string;
  in: "path" | "query" | "header";
}

export interface Operation {
  /** `openapi__<service>__<id>`: what the model calls. */
  name: string;
  operationId: string;
  method: string;
  path: string;
  description: string;
  inputSchema: JsonSchema;
  params: Param[];
  /** The input key the JSON body goes in (`body`), when the operation takes one. */
  bodyKey: string | null;
}

type Obj = Record<string, unknown>;

export function operationsOf(
  doc: Obj,
  svc: OpenApiService,
): { operations: Operation[]; notes: string[] } {
  const all: Operation[] = [];
  const notes: string[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Obj>)) {
    for (const method of METHODS) {
      const op = item?.[method] as Obj | undefined;
      if (!op) continue;
      const id = typeof op.operationId === "string" && op.operationId
        ? op.operationId
        : `${method}_${path}`;
      const name = `openapi__${svc.name}__${id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
      if (!NAME.test(name)) {
        notes.push(`operation '${id}' makes a tool name over 64 characters; left out`);
        continue;
      }
      const shared = (item.parameters ?? []) as Obj[];
      all.push(
        operation(name, id, method, path, op, [...shared, ...((op.parameters ?? []) as Obj[])]),
      );
    }
  }
  const picked = svc.operations ? all.filter((o) => svc.operations!.includes(o.operationId)) : all;
  for (const id of svc.operations ?? []) {
    if (!all.some((o) => o.operationId === id)) {
      notes.push(`operations names '${id}', which the document does not have`);
    }
  }
  if (picked.length > MAX_OPERATIONS) {
    notes.push(`${picked.length} operations; only the first ${MAX_OPERATIONS} are offered`);
  }
  if (picked.length === 0 && notes.length === 0) notes.push("it offers no operations");
  return { operations: picked.slice(0, MAX_OPERATIONS), notes };
}

function operation(
  name: string,
  operationId: string,
  method: string,
  path: string,
  op: Obj,
  rawParams: Obj[],
): Operation {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const params: Param[] = [];
  for (const p of rawParams) {
    const where = p.in;
    if (where !== "path" && where !== "query" && where !== "header") continue;
    const pname = String(p.name);
    if (params.some((x) => x.name === pname)) continue;
    params.push({ name: pname, in: where });
    properties[pname] = {
      ...((p.schema ?? { type: "string" }) as Obj),
      ...(typeof p.description === "string" && { description: p.description }),
    };
    if (p.required === true || where === "path") required.push(pname);
  }
  const body = jsonBody(op.requestBody as Obj | undefined);
  let bodyKey: string | null = null;
  if (body) {
    bodyKey = properties.body === undefined ? "body" : "request_body";
    properties[bodyKey] = body.schema;
    if (body.required) required.push(bodyKey);
  }
  const text = [op.summary, op.description].filter((s) => typeof s === "string" && s).join("\n");
  return {
    name,
    operationId,
    method: method.toUpperCase(),
    path,
    description: `${method.toUpperCase()} ${path}${text ? `: ${text}` : ""}`.slice(0, 4096),
    inputSchema: { type: "object", properties, ...(required.length && { required }) },
    params,
    bodyKey,
  };
}

function jsonBody(rb: Obj | undefined): { schema: Obj; required: boolean } | null {
  const content = (rb?.content ?? {}) as Record<string, Obj>;
  const type = Object.keys(content).find((t) => /^application\/(.+\+)?json/.test(t));
  if (!type) return null;
  return { schema: (content[type].schema ?? {}) as Obj, required: rb?.required === true };
}
