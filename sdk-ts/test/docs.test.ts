/** Every TypeScript snippet in README.md and docs/integrations.md runs as written (the `// model` line swapped). */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import ts from "typescript";

import { BASE_URL } from "./helpers.js";

const run = promisify(execFile);
const repo = new URL("../../../", import.meta.url);
const helpers = new URL("./helpers.js", import.meta.url).href;
const out = new URL("../snippets/", import.meta.url);

for (const doc of ["README.md", "docs/integrations.md", "sdk-ts/README.md"]) {
  const text = await readFile(new URL(doc, repo), "utf8");
  const snippets = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((s) => s.includes("@mongomem/client"));
  test(`${doc} has TypeScript snippets`, () => assert.ok(snippets.length >= 1));
  snippets.forEach((snippet, i) => {
    test(`${doc} snippet ${i + 1} runs against the local stack`, async () => {
      const source = snippet.replace(/^.*\/\/ model$/m, `const model = (await import(${JSON.stringify(helpers)})).echoModel();`);
      // the snippet is TypeScript: run what tsc makes of it
      const code = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false } }).outputText;
      await mkdir(out, { recursive: true });
      const file = new URL(`${doc.replace(/\W/g, "-")}-${i + 1}.mjs`, out);
      await writeFile(file, code);
      const { stdout, stderr } = await run(process.execPath, [fileURLToPath(file)], {
        cwd: fileURLToPath(new URL("../../", import.meta.url)),
        env: { ...process.env, MONGOMEM_URL: BASE_URL },
        timeout: 60_000,
      });
      assert.doesNotMatch(stderr, /Error/, stderr);
      if (code.includes("MongomemError")) assert.match(stdout, /422 validation_error/);
    });
  });
}

test("every TypeScript snippet of the docs type-checks under strict", async () => {
  // Given each snippet as written (the `// model` line too), as a module of a strict project
  const dir = new URL("../snippets-ts/", import.meta.url);
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  for (const doc of ["README.md", "docs/integrations.md", "sdk-ts/README.md"]) {
    const text = await readFile(new URL(doc, repo), "utf8");
    const snippets = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((s) => s.includes("@mongomem/client"));
    for (const [i, snippet] of snippets.entries()) {
      const name = `${doc.replace(/\W/g, "-")}-${i + 1}.ts`;
      await writeFile(new URL(name, dir), `${snippet}\nexport {};\n`);
      files.push(name);
    }
  }
  const config = { compilerOptions: { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], types: ["node"], skipLibCheck: true }, files };
  await writeFile(new URL("tsconfig.json", dir), JSON.stringify(config));
  // Then tsc finds nothing to say
  const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));
  const done = await run(process.execPath, [tsc, "-p", fileURLToPath(dir)], { timeout: 300_000 }).catch((error: { stdout?: string }) => error);
  assert.equal((done as { stdout?: string }).stdout ?? "", "");
});
