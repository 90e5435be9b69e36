/**
 * The package as npm publishes it (`npm pack`), installed into a project of its own: its entry points import
 * and require(), their types resolve under each common `moduleResolution`, and the README inside the tarball
 * has no link to a file the tarball lacks. (The project sits under sdk-ts/build, so the peers @mastra/core,
 * ai and zod resolve from sdk-ts/node_modules: no registry is needed.)
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const sdk = fileURLToPath(new URL("../../", import.meta.url));
const app = fileURLToPath(new URL("../pack-app/", import.meta.url));
const installed = `${app}node_modules/@mongomem/client/`;
const tsc = `${sdk}node_modules/typescript/bin/tsc`;

before(async () => {
  await rm(app, { recursive: true, force: true });
  await mkdir(installed, { recursive: true });
  const { stdout } = await run("npm", ["pack", "--silent", "--pack-destination", app], { cwd: sdk, timeout: 300_000 });
  const tarball = stdout.trim().split("\n").at(-1)!;
  await run("tar", ["-xzf", `${app}${tarball}`, "-C", installed, "--strip-components=1"]);
});

const USE = `
import { MongomemClient, MongomemError, type WorkingMemoryState } from "@mongomem/client";
import { MongomemMemory } from "@mongomem/client/mastra";
import { memoryTools, recordExchange } from "@mongomem/client/ai-sdk";

export async function use(client: MongomemClient): Promise<string | null> {
  const wm = await client.getWorkingMemory({ user_id: "ana" });
  // the union narrows: "unchanged" in wm, else the state
  if ("unchanged" in wm) return wm.cache_key;
  const state: WorkingMemoryState = wm;
  void [MongomemError, MongomemMemory, memoryTools, recordExchange];
  return state.content ?? null;
}
`;

for (const [resolution, module, type] of [["node10", "commonjs", "commonjs"], ["node16", "node16", "module"], ["bundler", "esnext", "module"]] as const) {
  test(`the three entry points type-check under moduleResolution ${resolution} (strict)`, async () => {
    const dir = `${app}${resolution}/`;
    await mkdir(dir, { recursive: true });
    await writeFile(`${dir}package.json`, JSON.stringify({ name: `check-${resolution}`, private: true, type }));
    await writeFile(`${dir}use.ts`, USE);
    await writeFile(
      `${dir}tsconfig.json`,
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module, moduleResolution: resolution, target: "es2022", lib: ["es2022", "dom"], types: [], skipLibCheck: true, ...(resolution === "node10" ? { esModuleInterop: true } : {}) }, files: ["use.ts"] }),
    );
    const done = await run(process.execPath, [tsc, "-p", dir], { cwd: dir, timeout: 300_000 }).catch((error: { stdout?: string }) => error);
    assert.equal((done as { stdout?: string }).stdout ?? "", "", `tsc under moduleResolution ${resolution}`);
  });
}

test("the entry points load with import and with require()", async () => {
  const script = `
    const esm = [await import("@mongomem/client"), await import("@mongomem/client/mastra"), await import("@mongomem/client/ai-sdk")];
    const { createRequire } = await import("node:module");
    const require = createRequire(process.cwd() + "/x.cjs");
    let cjs;
    try { cjs = [require("@mongomem/client"), require("@mongomem/client/mastra"), require("@mongomem/client/ai-sdk")]; }
    catch (error) { cjs = String(error.message); }
    console.log(JSON.stringify({ esm: esm.map((m) => typeof (m.MongomemClient ?? m.MongomemMemory ?? m.memoryTools)), cjs: Array.isArray(cjs) ? cjs.map((m) => typeof (m.MongomemClient ?? m.MongomemMemory ?? m.memoryTools)) : cjs }));
  `;
  const { stdout } = await run(process.execPath, ["--no-warnings", "--input-type=module", "-e", script], { cwd: app, timeout: 60_000 });
  const loaded = JSON.parse(stdout) as { esm: string[]; cjs: string[] | string };
  assert.deepEqual(loaded.esm, ["function", "function", "function"]);
  const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
  const requireEsm = (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major >= 23;
  if (requireEsm) assert.deepEqual(loaded.cjs, ["function", "function", "function"]);
  else assert.match(String(loaded.cjs), /is an ES module and this Node.js cannot require\(\) it: use `import`/);
});

test("the README inside the tarball links only to what the tarball holds", async () => {
  const readme = await readFile(`${installed}README.md`, "utf8");
  const links = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z]+:/.test(href));
  for (const href of links) assert.ok(existsSync(new URL(href, `file://${installed}`)), `README links to ${href}, which the package does not have`);
  assert.doesNotMatch(readme, /\]\(\.\.\//, "no link out of the package");
});
