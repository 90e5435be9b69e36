/**
 * Differential suite: every scenario of differential/scenarios.ts runs once with Mastra's own memory
 * (@mastra/memory's `Memory` over @mastra/libsql with a file database, the offline hashing embedder) and once
 * with `MongomemMemory` against the local stacks, and every observation that differs is a row of the table
 * kept in docs/integrations.md ("Differences from Mastra's Memory, measured").
 *
 * The test fails when a difference appears that the table does not list (with its reason), when a listed
 * difference is gone or changed, or when a listed difference has no reason. `MONGOMEM_DIFF_WRITE=1` rewrites
 * the table from this run, keeping the reasons already written (new rows get "?", which still fails).
 */
import assert from "node:assert/strict";
import { mkdtemp, mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { LibSQLStore, LibSQLVector } from "@mastra/libsql";
import type { MemoryConfig } from "@mastra/core/memory";
import { Memory } from "@mastra/memory";
import { MongomemMemory } from "@mongomem/client/mastra";
import { z } from "zod";

import { hashingEmbedder } from "./differential/embedder.js";
import { SCENARIOS, TEMPLATE, type Observations, type Side } from "./differential/scenarios.js";
import { BASE_URL, SCHEMA_URL, client, eventually } from "./helpers.js";

const DOC = new URL("../../../docs/integrations.md", import.meta.url);
const BEGIN = "<!-- differential:begin -->";
const END = "<!-- differential:end -->";
const SCHEMA = z.object({ name: z.string().optional(), city: z.string().optional(), diet: z.array(z.string()).optional() });

async function mastraSide(): Promise<Side> {
  const dir = await mkdtemp(join(tmpdir(), "mastra-diff-"));
  const url = `file:${join(dir, "mastra.db")}`;
  const storage = new LibSQLStore({ id: "diff", url });
  const vector = new LibSQLVector({ id: "diff-vector", url: `file:${join(dir, "vector.db")}` });
  return {
    kind: "mastra",
    memory(options, extra = {}) {
      const wm = options.workingMemory as { enabled?: boolean; scope?: "resource" | "thread" } | undefined;
      const shaped = wm?.enabled ? { ...wm, ...(extra.stack === "schema" ? { schema: SCHEMA } : { template: TEMPLATE }) } : wm;
      return new Memory({ storage, vector, embedder: hashingEmbedder as never, options: { ...options, ...(shaped ? { workingMemory: shaped as never } : {}) } });
    },
    async indexed() {
      // Mastra embeds on save: nothing to wait for
    },
  };
}

function mongomemSide(): Side {
  return {
    kind: "mongomem",
    memory(options: MemoryConfig, extra = {}) {
      return new MongomemMemory({
        client: client(extra.stack === "schema" ? SCHEMA_URL : BASE_URL),
        options,
        ...(extra.agentId ? { agentId: extra.agentId } : {}),
        // mongomem's additions (long-term memories as context, a search tool) are left out: they have no Mastra counterpart
        longTermMemory: false,
        searchTool: false,
      });
    },
    async indexed(_memory, user, query, count) {
      await eventually(async () => (await client().recall({ query, user_id: user, top_k: 10 })).matched.length >= count, `${count} messages indexed for "${query}"`);
    },
  };
}

async function observe(side: Side, run: (side: Side) => Promise<Observations>): Promise<Observations> {
  try {
    return await run(side);
  } catch (error) {
    return { "the scenario": `throws: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 160)}` };
  }
}

interface Row {
  scenario: string;
  observation: string;
  mastra: string;
  mongomem: string;
  why: string;
}

function cell(value: unknown): string {
  const text = value === undefined ? "(none)" : JSON.stringify(value);
  const short = text.length > 160 ? `${text.slice(0, 157)}...` : text;
  return "`" + short.replace(/\|/g, "\\|").replace(/`/g, "'") + "`";
}

function table(rows: Row[]): string {
  const lines = ["| scenario | observation | Mastra's `Memory` | `MongomemMemory` | why |", "|---|---|---|---|---|"];
  for (const r of rows) lines.push(`| ${r.scenario} | ${r.observation} | ${r.mastra} | ${r.mongomem} | ${r.why} |`);
  return lines.join("\n");
}

function documented(doc: string): Map<string, Row> {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  const rows = new Map<string, Row>();
  if (start < 0 || end < 0) return rows;
  for (const line of doc.slice(start + BEGIN.length, end).split("\n")) {
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    if (cells.length !== 5 || cells[0] === "scenario" || cells[0]!.startsWith("---")) continue;
    const [scenario, observation, mastra, mongomem, why] = cells as [string, string, string, string, string];
    rows.set(`${scenario}\n${observation}`, { scenario, observation, mastra, mongomem, why });
  }
  return rows;
}

test("MongomemMemory behaves like Mastra's Memory, except for the differences docs/integrations.md lists", { timeout: 600_000 }, async () => {
  const sides = [await mastraSide(), mongomemSide()];
  const rows: Row[] = [];
  let same = 0;
  const observed: Record<string, { mastra: Observations; mongomem: Observations }> = {};
  for (const scenario of SCENARIOS) {
    const [theirs, ours] = [await observe(sides[0]!, scenario.run), await observe(sides[1]!, scenario.run)];
    observed[scenario.name] = { mastra: theirs, mongomem: ours };
    for (const key of [...new Set([...Object.keys(theirs), ...Object.keys(ours)])]) {
      if (JSON.stringify(theirs[key]) === JSON.stringify(ours[key])) {
        same++;
        continue;
      }
      rows.push({ scenario: scenario.name, observation: key, mastra: cell(theirs[key]), mongomem: cell(ours[key]), why: "?" });
    }
  }
  const doc = await readFile(DOC, "utf8");
  const known = documented(doc);
  for (const row of rows) row.why = known.get(`${row.scenario}\n${row.observation}`)?.why ?? "?";
  const generated = table(rows);
  await mkdir(new URL("../differential/", import.meta.url), { recursive: true });
  await writeFile(new URL("../differential/table.md", import.meta.url), `${generated}\n\n${same} observations the same, ${rows.length} different\n`);
  await writeFile(new URL("../differential/observations.json", import.meta.url), JSON.stringify(observed, null, 1));
  console.log(`# differential: ${same} observations the same, ${rows.length} different`);
  if (process.env.MONGOMEM_DIFF_WRITE === "1") {
    const start = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    assert.ok(start >= 0 && end > start, `docs/integrations.md needs the markers ${BEGIN} ... ${END}`);
    await writeFile(DOC, `${doc.slice(0, start + BEGIN.length)}\n${generated}\n${doc.slice(end)}`);
  }
  const fresh = rows.filter((r) => !known.has(`${r.scenario}\n${r.observation}`));
  const changed = rows.filter((r) => {
    const k = known.get(`${r.scenario}\n${r.observation}`);
    return k && (k.mastra !== r.mastra || k.mongomem !== r.mongomem);
  });
  const generatedKeys = new Set(rows.map((r) => `${r.scenario}\n${r.observation}`));
  const gone = [...known.values()].filter((r) => !generatedKeys.has(`${r.scenario}\n${r.observation}`));
  const unexplained = rows.filter((r) => !r.why || r.why === "?");
  const report = (title: string, list: Row[]) => (list.length ? `${title}:\n${table(list)}\n` : "");
  assert.equal(
    fresh.length + changed.length + gone.length + unexplained.length,
    0,
    report("New differences (not in docs/integrations.md)", fresh) +
      report("Listed differences whose values changed", changed) +
      report("Listed differences that are gone (remove their rows)", gone) +
      report("Differences without a reason", unexplained) +
      "Run with MONGOMEM_DIFF_WRITE=1 to rewrite the table (reasons are kept), then give each new row its reason.",
  );
});
