/** Settings from the environment when there is one (Node, Bun, Deno with --allow-env); never required. */
export function env(name: string): string | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  try {
    const value = process?.env?.[name];
    return value === undefined || value === "" ? undefined : value;
  } catch {
    return undefined; // a runtime that refuses environment access
  }
}
