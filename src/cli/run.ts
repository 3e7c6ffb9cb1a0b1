/** `mur run`: placeholder until the session lands. */
export function runCommand(_args: string[]): Promise<number> {
  console.error("mur run: not built yet");
  return Promise.resolve(1);
}
