/**
 * A small pet service on loopback for the OpenAPI tests: its OpenAPI 3 document at
 * `/openapi.json` (servers: the relative `/api`), and the operations it describes under `/api`.
 * Every call needs `Authorization: Bearer <token>`; `GET /api/slow` never answers; every request
 * is recorded.
 */
export const DOC = {
  openapi: "3.0.3",
  info: { title: "pets", version: "1.0.0" },
  servers: [{ url: "/api" }],
  paths: {
    "/pets/{id}": {
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
      get: {
        operationId: "getPet",
        summary: "One pet by id",
        parameters: [{
          name: "fields",
          in: "query",
          schema: { type: "array", items: { type: "string" } },
        }],
        responses: {
          "200": {
            description: "the pet",
            content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" } } },
          },
        },
      },
    },
    "/pets": {
      post: {
        operationId: "createPet",
        requestBody: {
          required: true,
          content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" } } },
        },
        responses: { "201": { description: "created" } },
      },
    },
    "/slow": { get: { operationId: "slow", responses: { "200": { description: "never" } } } },
    "/logo": { get: { responses: { "200": { description: "a png" } } } },
  },
  components: {
    schemas: {
      Pet: {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" }, tag: { type: "string" } },
      },
    },
  },
};

export const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

export function startPets(token: string) {
  const seen: { method: string; url: string; auth: string | null; body: string }[] = [];
  const abort = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: abort.signal, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const body = await req.text();
      seen.push({
        method: req.method,
        url: url.pathname + url.search,
        auth: req.headers.get("authorization"),
        body,
      });
      if (url.pathname === "/openapi.json") return Response.json(DOC);
      if (req.headers.get("authorization") !== `Bearer ${token}`) {
        return Response.json({ error: "unauthorized" }, { status: 401 });
      }
      if (url.pathname === "/api/slow") return await new Promise<Response>(() => {});
      if (url.pathname === "/api/logo") {
        return new Response(PNG, { headers: { "content-type": "image/png" } });
      }
      const m = /^\/api\/pets\/(\d+)$/.exec(url.pathname);
      if (m && req.method === "GET") {
        if (m[1] === "404") return Response.json({ error: "no such pet" }, { status: 404 });
        return Response.json({
          id: Number(m[1]),
          name: "Rex é 世界",
          fields: url.searchParams.getAll("fields"),
        });
      }
      if (url.pathname === "/api/pets" && req.method === "POST") {
        return Response.json({ created: JSON.parse(body) }, { status: 201 });
      }
      return new Response("not found", { status: 404 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    seen,
    async close() {
      abort.abort();
      await server.finished;
    },
  };
}
