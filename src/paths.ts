/**
 * The few path operations `mur run` needs before its readiness line, without `node:path`.
 *
 * Why: importing any `node:` module wakes Deno's Node compatibility layer, about 11 ms of CPU at
 * start (measured on this machine: `import "node:path"` against an empty file), and `mur run`
 * needed `node:path` only for these. `posix` is exact POSIX semantics (shell paths in
 * src/tools/read_only*.ts); `resolve`, `dirname` and `basename` are the platform's: POSIX here,
 * and on Windows `node:path` itself, loaded only there. tests/paths_property_test.ts checks each
 * against `node:path` on generated paths.
 */

/** `node:path`'s `posix.normalize`: `.` and `..` folded, slashes collapsed, a trailing one kept. */
function normalize(p: string): string {
  if (p === "") return ".";
  const abs = p.startsWith("/");
  const trailing = p.endsWith("/");
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!abs) out.push("..");
    } else out.push(seg);
  }
  let s = out.join("/");
  if (s === "" && !abs) s = ".";
  if (s !== "" && trailing) s += "/";
  return abs ? `/${s}` : s;
}

/** `posix.join`: the non-empty parts joined with `/`, then normalized. */
function join(...parts: string[]): string {
  const kept = parts.filter((x) => x !== "");
  return kept.length === 0 ? "." : normalize(kept.join("/"));
}

/** `posix.resolve`: right to left until a part is absolute, from the working directory. */
function resolvePosix(...parts: string[]): string {
  let path = "";
  for (let i = parts.length - 1; i >= 0 && !path.startsWith("/"); i--) {
    if (parts[i] !== "") path = path === "" ? parts[i] : `${parts[i]}/${path}`;
  }
  if (!path.startsWith("/")) path = path === "" ? Deno.cwd() : `${Deno.cwd()}/${path}`;
  const n = normalize(path);
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n;
}

/** `posix.dirname`, node:path's own algorithm (`a//b` → `a/`, `//a` → `//`). */
function dirnamePosix(p: string): string {
  if (p === "") return ".";
  const hasRoot = p.startsWith("/");
  let end = -1;
  let matchedSlash = true;
  for (let i = p.length - 1; i >= 1; i--) {
    if (p[i] === "/") {
      if (!matchedSlash) {
        end = i;
        break;
      }
    } else matchedSlash = false;
  }
  if (end === -1) return hasRoot ? "/" : ".";
  if (hasRoot && end === 1) return "//";
  return p.slice(0, end);
}

/** `posix.basename` (without the suffix argument). */
function basenamePosix(p: string): string {
  const trimmed = p.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

export const posix = {
  normalize,
  join,
  resolve: resolvePosix,
  dirname: dirnamePosix,
  basename: basenamePosix,
};

interface PlatformPath {
  resolve(...parts: string[]): string;
  dirname(p: string): string;
  basename(p: string): string;
}

// A specifier built at run time, so `deno run` does not load node:path where it is not used
// (src/lazy.ts says why a literal would be).
const windows: PlatformPath | null = Deno.build.os === "windows"
  ? await import(["node", "path"].join(":"))
  : null;

export const resolve = (...parts: string[]): string =>
  windows ? windows.resolve(...parts) : resolvePosix(...parts);
export const dirname = (p: string): string => windows ? windows.dirname(p) : dirnamePosix(p);
export const basename = (p: string): string => windows ? windows.basename(p) : basenamePosix(p);
