/**
 * A CODEX_HOME for the real Codex CLI run offline: its config.toml names a custom provider at
 * the fake Responses endpoint (scripts/fakes/codex_endpoint.ts) — codex 0.169 ignores
 * OPENAI_BASE_URL — with a fake key read from FAKE_KEY.
 */
export async function codexHome(home: string, endpointUrl: string): Promise<{
  dir: string;
  /** The harness environment entries (`inference.env` form) that point Codex at it. */
  env: string[];
}> {
  const dir = `${home}/codex-home`;
  await Deno.mkdir(dir);
  await Deno.writeTextFile(
    `${dir}/config.toml`,
    [
      `model = "fake-model"`,
      `model_provider = "fake"`,
      `[model_providers.fake]`,
      `name = "fake"`,
      `base_url = "${endpointUrl}"`,
      `wire_api = "responses"`,
      `env_key = "FAKE_KEY"`,
      "",
    ].join("\n"),
  );
  return { dir, env: [`CODEX_HOME=${dir}`, "FAKE_KEY=sk-fake"] };
}
