/**
 * OpenAPI services as tool sources (docs/mcp.md "OpenAPI services") against a real local
 * service (./pets.ts): the document read from its url (its relative server url resolved against
 * it) and checked by @apidevtools/swagger-parser, its operations offered as
 * `openapi__<service>__<operationId>` with their parameters and body as the input schema; calls
 * fill the path, the query (a list repeated) and a JSON body, send the configured header, and
 * answer the status and body fenced (a 404 is data, an image an attachment, a slow call a
 * timeout); a document that is not OpenAPI, an external `$ref`, an unknown `operations` entry,
 * an unreachable url are told.
 */
import assert from "node:assert/strict";
import type { OpenApiService } from "../../../src/manifest/openapi_services.ts";
import { OpenApiSources } from "../../../src/tools/openapi/sources.ts";
import type { SourceError } from "../../../src/tools/source_errors.ts";
import { ctxFor, tempWorkdir } from "../helpers.ts";
import { PNG, startPets } from "./pets.ts";

const TOKEN = "t0ken-never-logged";

function service(spec: string, extra: Partial<OpenApiService> = {}): OpenApiService {
  return {
    name: "pets",
    spec,
    headers: { Authorization: `Bearer ${TOKEN}` },
    timeoutMs: 1_000,
    ...extra,
  };
}

Deno.test("an OpenAPI service's operations are tools: list, path, query, body, header, errors", async () => {
  const pets = startPets(TOKEN);
  const workdir = await tempWorkdir();
  const errors: SourceError[] = [];
  // `short` is the same service with a 1 s call limit, for the call that never answers.
  const sources = new OpenApiSources([
    service(`${pets.url}/openapi.json`, { timeoutMs: 30_000 }),
    { ...service(`${pets.url}/openapi.json`), name: "short", operations: ["slow"] },
  ], { onError: (e) => errors.push(e) });
  try {
    await sources.start();
    assert.deepEqual(errors, []);
    const names = sources.tools().map((t) => t.name).filter((n) => !n.startsWith("openapi__short"));
    assert.deepEqual(names, [
      "openapi__pets__getPet",
      "openapi__pets__createPet",
      "openapi__pets__slow",
      "openapi__pets__get__logo",
    ]);
    const tool = (n: string) => sources.tools().find((t) => t.name === n)!;
    const get = tool("openapi__pets__getPet");
    assert.deepEqual((get.inputSchema as { required: string[] }).required, ["id"]);
    assert.match(get.description, /^GET \/pets\/\{id\}: One pet by id/);
    const create = tool("openapi__pets__createPet");
    // The body's schema is the referenced one, resolved.
    assert.deepEqual(
      (create.inputSchema as { properties: { body: { required: string[] } } }).properties.body
        .required,
      ["name"],
    );

    const r = await get.call({ id: 7, fields: ["name", "tag"] }, ctxFor(workdir));
    assert.equal(r.isError, false, r.content);
    assert.equal(r.fenceSource, "tool:openapi__pets__getPet");
    assert.match(r.content, /HTTP 200/);
    assert.ok(r.content.includes('"name":"Rex é 世界"'), r.content);
    assert.equal(pets.seen.at(-1)!.url, "/api/pets/7?fields=name&fields=tag");
    assert.equal(pets.seen.at(-1)!.auth, `Bearer ${TOKEN}`);

    const c = await create.call({ body: { name: "Tom", tag: "cat" } }, ctxFor(workdir));
    assert.match(c.content, /HTTP 201/);
    assert.equal(pets.seen.at(-1)!.body, '{"name":"Tom","tag":"cat"}');

    // A 404 is data the model reads.
    const missing = await get.call({ id: 404 }, ctxFor(workdir));
    assert.equal(missing.isError, true);
    assert.match(missing.content, /HTTP 404[\s\S]*no such pet/);
    assert.equal(missing.fenceSource, "tool:openapi__pets__getPet");

    // An image body is an attachment.
    const logo = await tool("openapi__pets__get__logo").call({}, ctxFor(workdir));
    assert.deepEqual([...logo.images[0].data], [...PNG]);

    // Past timeout_secs: an error result, unfenced.
    const slow = await tool("openapi__short__slow").call({}, ctxFor(workdir));
    assert.equal(slow.isError, true);
    assert.match(slow.content, /timed out after 1 s/);
    assert.equal(slow.fenceSource, null);
  } finally {
    await pets.close();
    await Deno.remove(workdir, { recursive: true });
  }
});

Deno.test("OpenAPI documents that cannot be used are told, never fatal", async () => {
  const pets = startPets(TOKEN);
  const dir = await tempWorkdir();
  await Deno.writeTextFile(`${dir}/not.yaml`, "hello: world\n");
  await Deno.writeTextFile(
    `${dir}/external.yaml`,
    `openapi: 3.0.3
info: { title: x, version: "1" }
paths:
  /a:
    get:
      responses:
        "200": { description: ok, content: { application/json: { schema: { $ref: "other.yaml#/X" } } } }
`,
  );
  const errors: SourceError[] = [];
  const sources = new OpenApiSources([
    { ...service(`${dir}/not.yaml`), name: "not" },
    { ...service(`${dir}/external.yaml`, { baseUrl: pets.url }), name: "external" },
    { ...service(`${pets.url}/openapi.json`, { operations: ["getPet", "nope"] }), name: "picked" },
    { ...service(`http://127.0.0.1:1/openapi.json`), name: "down" },
  ], { onError: (e) => errors.push(e) });
  try {
    await sources.start();
    const by = (s: string) =>
      errors.filter((e) => e.source === s).map((e) => e.message).join(" | ");
    assert.match(by("not"), /not OpenAPI 3/);
    assert.match(by("external"), /refers outside itself \(\$ref .other.yaml#\/X.\)/);
    assert.match(by("picked"), /operations names 'nope'/);
    assert.match(by("down"), /cannot fetch/);
    assert.deepEqual(sources.tools().map((t) => t.name), ["openapi__picked__getPet"]);
    assert.ok(!JSON.stringify(errors).includes(TOKEN));
    const standing = sources.errorsSince(sources.errorMark()).map((e) => e.source).sort();
    assert.deepEqual(standing, ["down", "external", "not"]);
  } finally {
    await pets.close();
    await Deno.remove(dir, { recursive: true });
  }
});
