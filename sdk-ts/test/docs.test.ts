/** Every TypeScript snippet in README.md and docs/integrations.md runs as written (the `// model` line swapped). */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

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
      const code = snippet.replace(/^.*\/\/ model$/m, `const model = (await import(${JSON.stringify(helpers)})).echoModel();`);
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
