/**
 * Every diagnostic code `mur` prints (`error[E-…]`, `warning[W-…]`) and every JSON-RPC error code
 * the door answers, with what each means. docs/diagnostics.md's tables are this registry written
 * out: tests/diagnostics_test.ts checks that every code in src/ is here, that every code here is
 * used and documented, and that the docs say the same thing. A new code is a line here and a row
 * there; `MurError` and `warningLine` take only these.
 */

export const DIAGNOSTICS = {
  "E-CLI-001": "an unknown command or subcommand (with `did you mean` for a slip)",
  "E-CLI-002":
    "an unknown flag, a flag without its value, a missing or extra argument, flags that do not go together",
  "E-CLI-003": "a value the flag or argument does not take",
  "E-IO-001":
    "a file or folder a flag or the manifest names is not there (the manifest, a script, a tool or hook program with a `/`)",
  "E-IO-002": "permission denied on a path a flag or the manifest names",
  "E-IO-003":
    "the connection to a capsule's door was lost or could not be made (`mur watch`: `connection to <session> lost after event id <n>`); other I/O errors reading the manifest",
  "E-IO-004":
    "the door refused the request (HTTP 401: no token, or one it does not know; 403: the token lacks the method's scope; the hint says which) or did not answer as a door",
  "E-IO-005":
    "a path names the wrong kind of thing: a file where a folder is needed (`--workdir`), a folder where a file is (`inference.script`, a tool's program)",
  "E-IO-006": "the file system refused to write: the disk or a quota is full, or it is read-only",
  "E-MAN-001": "a required key is missing (or a provider key is given without a driver)",
  "E-MAN-002": "YAML syntax, with line and column",
  "E-MAN-003":
    "a value is not valid, naming its key path (`inference.max_turns`, `hooks[1].commit_policy`, an unset `${NAME}`, …)",
  "E-CAP-001":
    "a `capabilities.network.allow` entry is not a URL (`https://host[:port]`, no path), a host, or `host:port`",
  "E-CAP-002": "`capabilities.filesystem.scope` is absolute or escapes the workdir with `..`",
  "E-CAP-003":
    "the containment floor (`containment:`, raised by `--containment`) is more than this host reaches: `declared containment class 'scoped' is not achievable on this host (achieved: 'advisory'): <reason>`",
  "E-CAP-010":
    "an artifact's `config` is not a mapping, or is over 65,536 bytes as JSON (it reaches the artifact as `MURMUR_ARTIFACT_CONFIG`)",
  "E-CAP-013":
    "an artifact claims the name of a tool the runtime provides itself (`request-input`, `call-member`, `end-without-answer`, `delegate-task`)",
  "E-CAP-016":
    "an artifact's `capabilities.env.allow` names a variable beyond what mur hands that kind of process: the door token (`MURMUR_DOOR_TOKEN`) to any, a runtime credential (`*_API_KEY`, `*_AUTH_TOKEN`, `*_OAUTH_TOKEN`) to a hook",
  "E-MAN-004":
    "a key a slip away from a key its section declares and lacks (`inferance:` with no `inference:`, `inference.scirpt`, `capabilities.shell.allw`), or a key dedented out of its section (`script:` at the top level): if ignored, it would leave the key at its default",
  "W-SEC-011":
    "`capabilities.filesystem.workdir_exec: true` caps containment at advisory: every process the capsule starts runs unconfined",
  "W-SEC-040":
    "no containment floor is declared and this host reaches only advisory (no bubblewrap, or no user namespaces): processes run unconfined, with the reason",
  "W-SEC-019":
    "a key `mur` does not know is ignored, with the nearest known key when one is close (`did you mean 'inference'?`); also a key the chosen transport or driver does not use",
  "W-MAN-001":
    "no `inference.driver` and no `script`: the capsule runs the built-in scripted model, one canned answer per task",
  "W-MAN-002":
    "a `capabilities.shell.allow` binary, or a tool's or hook's program given by bare name, is not on `PATH`: every call of it would fail",
  "W-MAN-003":
    "shell tools beside policy (`deny`) hooks on `on-tool-call` only: shell calls fire `on-shell`, so those hooks never see them",
  "W-MAN-010":
    "an `approvals.tools` entry never asks as written: it names no tool the manifest declares, or gives `commands` to a tool that is not a shell tool",
  "E-ROS-001":
    "the roster file does not have the roster's shape: YAML syntax, an unknown key, a missing or wrong-typed value, a bad member name, `manifest` and `url` both or neither, a rule calling its own member (names the key path and the member)",
  "E-ROS-002": "the roster marks no member, or more than one, `entry: true`",
  "E-ROS-003": "two roster members have the same name",
  "E-ROS-004": "a reachability rule names someone who is not a member of the roster",
  "E-ROS-007":
    "a roster member launched here cannot be admitted: its manifest is not there or does not load (quotes the manifest's own error)",
  "E-ROS-008":
    "a reachability rule lists the entry member in `to`: the entry member runs the formation's task and is never called",
  "E-ROS-009":
    "a member named by `url` is the entry member or a caller: only members launched here run the task or get callees",
  "E-ROS-010": "a member named by `url` has its token in a `token_env` variable that is not set",
  "E-RUN-005":
    "the model driver cannot be built from the manifest (no model, no endpoint, no API key, an unknown driver)",
  "E-RUN-006": "the harness binary (`transport: process`) is not on this host",
  "E-RUN-007":
    "the agent loop failed at runtime, or the trace could not be written; the running task fails with it",
  "E-RUN-009": "`inference.system_prompt_file` cannot be read",
  "E-RUN-010": "the door cannot listen: the port is in use",
  "E-RUN-015": "`--resume` and `--context` together",
  "E-RUN-016": "the session to resume ran no task with a context",
  "E-RUN-017": "the session to resume has no conversation record",
  "E-RUN-022":
    "a session address names no running capsule (none running, no match, ambiguous, its process is gone)",
  "E-RUN-023": "the session's process runs, but its door did not answer as that session",
  "E-RUN-024": "`mur stop` could not end the session's process",
  "E-RUN-028": "the running-session records (`$MURMUR_HOME/running/`) cannot be read",
  "E-RUN-033": "a harness turn failed (auth, quota, max-turns, harness-error, other)",
  "E-RUN-034": "the process driver failed",
  "E-RUN-035": "the harness was silent for 600 s and was killed",
  "E-RUN-036": "the harness session to resume was lost",
  "E-RUN-043":
    "the workdir holds a live session: one session runs in a workdir at a time (names the session and its pid)",
  "E-RUN-040":
    "the session ran and a deciding task did not complete: names the task and its final status message",
  "E-RUN-045":
    "a capsule mur starts as a child (a formation member, a delegated child) did not come up: it could not start, exited or printed something else before its readiness line, or gave none in time (quotes its last stderr lines)",
  "E-RUN-046":
    "a formation member's hand-off from `mur run --roster` is not usable: `MURMUR_FORMATION_ID` is not a formation id, or the `MURMUR_CREW_DOOR` file cannot be read or is not this formation's",
  "E-RUN-048": "the session holds no such task (`mur cancel`)",
  "E-RUN-070":
    "the task waits for no approval: it is working, has ended, or waits for an answer to a question; or, with no task named, none or several of the session's do (`mur approve`, `mur deny`)",
  "E-RUN-071":
    "the door refused an approval's answer: not the operator's token, or the call waiting is no longer the one read (`mur approve`, `mur deny`)",
  "E-RUN-049":
    "the task cannot be canceled: it has ended (the door answered `-32002`); nothing was changed",
  "E-RUN-050":
    "an internal error in `mur run` (an uncaught exception): the running task fails with it, the session ends `failed`",
  "E-RUN-051":
    "the staging phase stopped the launch: an `on-stage` hook failed or answered a bad manifest name, or a manifest under `workdir/tools/` is unusable; see `logs/bootstrap.log`",
  "E-PUB-001":
    "`publish` was given a path outside the workdir (absolute, or with a `..` component): the tool call fails, nothing is published",
  "E-PUB-002":
    "`publish` was given a path through a symbolic link: refused wherever it points, nothing is published",
  "E-PUB-003":
    "`publish` was given a path that is not a regular file in the workdir (missing, a folder, a device)",
  "E-PUB-004": "`publish` was given a file larger than `outputs.max_bytes`",
  "W-RUN-001": "a turn stopped at `inference.max_tokens`: `out/result.txt` holds a fragment",
  "W-RUN-002": "the harness version is not one mur was tested with",
  "W-RUN-003":
    "`--resume`: the conversation record ends in a line cut short by a kill; that last message is left out",
  "W-RUN-004":
    "no task came: the session waited for a first task (no `--task`, no task.md, nothing sent to its door within `MURMUR_A2A_TIMEOUT_SECS`, 30 s) and ended without running one",
  "W-RUN-005":
    "a model call over HTTP failed in a way a retry may mend (refused or dropped connection, 429, 5xx): one line per retry, saying why, which retry of how many and the wait before it; the trace has a `harness_retry` line too",
  "W-CLU-001":
    "the capsule cannot publish to its `cluster.redis` (unreachable, refused, a TLS certificate or a password Redis does not take, an unreadable `MURMUR_REDIS_CA`): the session and its door go on; edges serve what was not published as `gap` / `lagged`",
  "W-CLU-002":
    "`cluster` with `network.authentication` but no `MURMUR_CLUSTER_KEY`: edges cannot verify this session's tokens and refuse its calls",
  "E-EDGE-001":
    "`mur edge` was given no Redis (`--redis` or `MURMUR_REDIS_URL`), a URL it cannot use, a CA file (`--redis-ca`, `MURMUR_REDIS_CA`) it cannot read, or a `MURMUR_CLUSTER_KEY` shorter than 32 bytes",
  "E-EDGE-002":
    "`mur edge` cannot listen: the port is in use (`--port`; 0 takes any free one), or `--bind` is not an address of this machine",
  "W-EDGE-001":
    "`mur edge` cannot reach its Redis (at start, within 2 s, or later; unreachable, a TLS certificate or a password refused): it serves on, its connections stay open (heartbeats go on) and read on from where they were when Redis answers",
  "W-OTEL-001":
    "an `OTEL_EXPORTER_OTLP_*` variable holds a value that cannot be used (not an http(s) URL, a header not `key=value`): no span export",
  "W-OTEL-002":
    "spans were not exported when the session ended (the collector is down, refused them or was too slow): counts; the trace's `otel_export` line has them too",
  "W-MCP-001":
    "an MCP server (`mcp_servers:`) could not be started, initialized or listed, left tools out, or went away during the session: the model goes without its tools, the session goes on (the trace's `source_error` line, the task's `sourceErrors`)",
  "W-API-001":
    "an OpenAPI service (`openapi_services:`) could not be read or checked, or left operations out: the model goes without its tools, the session goes on (the trace's `source_error` line, the task's `sourceErrors`)",
  "W-PUSH-001":
    "push notifications were not delivered: given up after their retries, dropped from a full queue, or left when the session ended (counts; the trace's `push_end` lines name each event)",
  "W-SEC-023": "the running record could not be written: the session is reachable only by its URL",
  "W-SEC-031": "the harness bills an API key, not a subscription",
  "W-SEC-032": "the door listens off loopback without `network.authentication`",
  "E-BLD-001":
    "`deno task compile` failed: `deno compile` could not build the binary, most often because it cannot download its runtime (set `DENORT_BIN` to a local denort)",
  "E-TRC-001": "a trace cannot be read: not JSON, no envelope, empty, no `session_start`",
  "E-TRC-002":
    "no session folder matches the address (none, ambiguous, not an address), or the path has no trace",
} as const;

export type DiagnosticCode = keyof typeof DIAGNOSTICS;

/**
 * The door's JSON-RPC error codes (docs/diagnostics.md "The door's JSON-RPC errors"): the
 * JSON-RPC 2.0 ones, then A2A's, whose `data` carries a google.rpc.ErrorInfo with `reason`.
 */
export const RPC_ERRORS = {
  parseError: { code: -32700, reason: null, meaning: "the body is not JSON (or nests too deep)" },
  invalidRequest: { code: -32600, reason: null, meaning: "not a JSON-RPC 2.0 request" },
  methodNotFound: { code: -32601, reason: null, meaning: "no such method on this door" },
  invalidParams: {
    code: -32602,
    reason: null,
    meaning: "the params are not what the method takes",
  },
  internalError: { code: -32603, reason: null, meaning: "the request could not be handled" },
  taskNotFound: { code: -32001, reason: "TASK_NOT_FOUND", meaning: "no such task" },
  taskNotCancelable: {
    code: -32002,
    reason: "TASK_NOT_CANCELABLE",
    meaning: "the task cannot be canceled: it has ended",
  },
  pushNotificationNotSupported: {
    code: -32003,
    reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    meaning:
      "a push-notification method, or a send with a push config, on a door whose manifest leaves push off",
  },
  unsupportedOperation: {
    code: -32004,
    reason: "UNSUPPORTED_OPERATION",
    meaning: "not supported here",
  },
  contentTypeNotSupported: {
    code: -32005,
    reason: "CONTENT_TYPE_NOT_SUPPORTED",
    meaning: "a raw or url part: this agent reads text and data parts only",
  },
  versionNotSupported: {
    code: -32009,
    reason: "VERSION_NOT_SUPPORTED",
    meaning: "wrong `A2A-Version`",
  },
} as const;

export type RpcErrorName = keyof typeof RPC_ERRORS;
export type RpcCode = (typeof RPC_ERRORS)[RpcErrorName]["code"];
