/** OpenAI's documented error body, shared by the Chat Completions and Responses fakes. */

const TYPES: Record<number, [type: string, code: string | null]> = {
  400: ["invalid_request_error", null],
  401: ["invalid_request_error", "invalid_api_key"],
  403: ["invalid_request_error", "unsupported_country_region_territory"],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
  500: ["server_error", null],
  503: ["server_error", null],
};

export function openaiErrorBody(status: number, message: string | undefined, req: Request) {
  const [type, code] = TYPES[status] ??
    [status >= 500 ? "server_error" : "invalid_request_error", null];
  let text = message;
  if (!text && status === 401) {
    // The real API echoes a masked fragment of the key it refused; the fake does too, so tests
    // can check the driver never repeats the body of a credential refusal.
    const key = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
    text = `Incorrect API key provided: ${key.slice(0, 3)}***${
      key.slice(-4)
    }. You can find your API key at https://platform.openai.com/account/api-keys.`;
  }
  return { error: { message: text ?? type, type, param: null, code } };
}
