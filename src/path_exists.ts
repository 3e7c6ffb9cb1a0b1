/** Whether anything is at `path` (a file, a folder, a link's target), read synchronously. */
export function existsSync(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
