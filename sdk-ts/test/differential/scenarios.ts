/**
 * The scenario scripts of the differential suite: each one drives a Mastra memory (through an Agent with a
 * scripted model, and through the memory's own methods) and returns what a user of that memory can observe,
 * keyed by a short name. The same script runs once with @mastra/memory's `Memory` and once with
 * `MongomemMemory`; differential.test.ts compares the two records key by key.
 *
 * Observations never hold generated ids or clock times: threads are named by their titles or labels, messages
 * by their text, so the two sides' records compare as values.
 */
import { Agent } from "@mastra/core/agent";
import type { MastraDBMessage } from "@mastra/core/agent/message-list";
import type { MastraMemory, MemoryConfig } from "@mastra/core/memory";

import { scriptedModel, uid, type Step } from "../helpers.js";

export type Stack = "template" | "schema";

/** One side of the comparison: how to make its memory, and how to wait for its recall index. */
export interface Side {
  kind: "mastra" | "mongomem";
  memory(options: MemoryConfig, extra?: { stack?: Stack; agentId?: string }): MastraMemory;
  /** Wait until `query` finds `count` messages of the user (mongomem indexes in the background). */
  indexed(memory: MastraMemory, user: string, query: string, count: number): Promise<void>;
}

export type Observations = Record<string, unknown>;

export interface Scenario {
  name: string;
  run(side: Side): Promise<Observations>;
}

export const TEMPLATE = "# User\n- **Name**:\n- **City**:\n";
export const FILLED = "# User\n- **Name**: Ana\n- **City**: Porto\n";

/** One agent run: the model answers from `steps`; returns the prompts it was shown and the tools it was offered. */
async function run(memory: MastraMemory, user: string, thread: string, said: string, steps: Step[], options: { agent?: string; memoryOptions?: MemoryConfig } = {}) {
  const model = scriptedModel(steps);
  const tools: string[][] = [];
  const original = model.doGenerate.bind(model);
  model.doGenerate = async (call) => {
    tools.push((call.tools ?? []).map((t) => t.name).sort());
    return original(call);
  };
  const id = options.agent ?? "assistant";
  // the cast: Mastra bundles its own copy of the provider types (a patch version behind ai's)
  const agent = new Agent({ id, name: id, instructions: "You are a helpful assistant.", model: model as never, memory });
  const answer = await agent.generate(said, { memory: { thread, resource: user, ...(options.memoryOptions ? { options: options.memoryOptions } : {}) } });
  return { text: answer.text, prompts: model.prompts.map((p) => JSON.stringify(p)), tools };
}

async function settle(attempt: () => Promise<unknown>): Promise<string | null> {
  try {
    await attempt();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Whether the tool result the model was shown next is an error (an AI SDK error output, or Mastra's validation error). */
function toolFailed(prompt: string | undefined): boolean {
  const results = [...(prompt ?? "").matchAll(/"type":"tool-result"[\s\S]*?"output":(\{[\s\S]*?\})\}/g)].map((m) => m[1]!);
  return results.some((r) => /"type":"error-(text|json)"|\\?"error\\?":\s*true|validation failed/i.test(r));
}

/** Which of `probes` the text holds. */
function seen(text: string, probes: string[]): string[] {
  return probes.filter((p) => text.includes(p.replace(/\n/g, "\\n")) || text.includes(p));
}

function textOf(message: MastraDBMessage): string {
  const parts = message.content.parts ?? [];
  const text = parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  return text || (typeof message.content.content === "string" ? message.content.content : "");
}

async function stored(memory: MastraMemory, thread: string, user: string): Promise<string[]> {
  const all = await memory.recall({ threadId: thread, resourceId: user, perPage: false });
  return all.messages.map((m) => `${m.role}: ${textOf(m)}`);
}

/** getThreadById with the owner (MongomemMemory takes it; Mastra's Memory's type has threadId alone). */
function threadById(memory: MastraMemory, threadId: string, resourceId: string) {
  return (memory as unknown as { getThreadById(args: { threadId: string; resourceId?: string }): ReturnType<MastraMemory["getThreadById"]> }).getThreadById({ threadId, resourceId });
}

/** The block Mastra's SemanticRecall puts other threads' messages in. */
function otherThreadsBlock(prompt: string): string {
  return /remembered_from_other_conversation>([\s\S]*?)<end_remembered_from_other_conversation/.exec(prompt)?.[1] ?? "";
}

const WM_ON = (scope: "resource" | "thread") => ({ workingMemory: { enabled: true, scope } }) as MemoryConfig;

export const SCENARIOS: Scenario[] = [
  {
    name: "threads",
    async run(side) {
      const memory = side.memory({});
      const user = uid("th");
      const [a, b] = [uid("a"), uid("b")];
      const first = await memory.createThread({ resourceId: user, threadId: a, title: "First", metadata: { project: "x" } });
      await memory.createThread({ resourceId: user, threadId: b, title: "Second", metadata: { project: "y" } });
      const fresh = side.memory({});
      const listed = await memory.listThreads({ filter: { resourceId: user } });
      const byMetadata = await memory.listThreads({ filter: { resourceId: user, metadata: { project: "x" } } });
      const updated = await memory.updateThread({ id: a, title: "Renamed", metadata: { project: "z" } });
      const out: Observations = {
        "createThread returns": { title: first.title, owner: first.resourceId === user, metadata: first.metadata },
        "getThreadById with resourceId": (await threadById(memory, a, user))?.title ?? null,
        "getThreadById without resourceId, same instance": (await memory.getThreadById({ threadId: a }))?.title ?? null,
        "getThreadById without resourceId, another instance": (await fresh.getThreadById({ threadId: b }))?.title ?? null,
        "listThreads (titles, newest first)": listed.threads.map((t) => t.title),
        "listThreads total": listed.total,
        "listThreads by metadata": byMetadata.threads.map((t) => t.title),
        "updateThread returns": { title: updated.title, metadata: updated.metadata },
        "listThreads without resourceId": await memory.listThreads({}).then((r) => `${r.threads.length >= 2 ? "threads" : "none"}`, () => "error"),
      };
      await memory.deleteThread(a);
      out["getThreadById after deleteThread"] = (await threadById(memory, a, user))?.title ?? null;
      out["listThreads after deleteThread"] = (await memory.listThreads({ filter: { resourceId: user } })).threads.map((t) => t.title);
      return out;
    },
  },
  {
    name: "thread ids and users",
    async run(side) {
      const memory = side.memory({ lastMessages: 10 });
      const thread = uid("shared");
      const [ana, bo] = [uid("ana"), uid("bo")];
      await run(memory, ana, thread, "Ana's secret is tangerine", [{ text: "Noted, Ana." }]);
      const error = await settle(() => run(memory, bo, thread, "Bo here", [{ text: "Hi Bo." }]));
      return {
        "a second user runs on the same thread id (one instance)": error ? "refused" : "runs",
        "the thread keeps its first owner": (await threadById(memory, thread, ana))?.resourceId === ana,
      };
    },
  },
  {
    name: "lastMessages",
    async run(side) {
      const memory = side.memory({ lastMessages: 2 });
      const user = uid("lm");
      const thread = uid("t");
      for (const word of ["alpha", "bravo", "charlie"]) await run(memory, user, thread, `say ${word}`, [{ text: `ok ${word}` }]);
      const last = await run(memory, user, thread, "say delta", [{ text: "done" }]);
      return {
        "history in the prompt": seen(last.prompts[0]!, ["say alpha", "ok alpha", "say bravo", "ok bravo", "say charlie", "ok charlie", "say delta"]),
        "stored messages": await stored(memory, thread, user),
      };
    },
  },
  {
    name: "lastMessages false",
    async run(side) {
      const memory = side.memory({ lastMessages: false });
      const user = uid("lf");
      const thread = uid("t");
      await run(memory, user, thread, "first words", [{ text: "first answer" }]);
      const second = await run(memory, user, thread, "second words", [{ text: "second answer" }]);
      return {
        "history in the prompt": seen(second.prompts[0]!, ["first words", "first answer"]),
        "stored messages": await stored(memory, thread, user),
      };
    },
  },
  {
    name: "messageHistory maxTokens",
    async run(side) {
      const memory = side.memory({ lastMessages: 50, messageHistory: { maxTokens: 400 } } as MemoryConfig);
      const user = uid("mt");
      const thread = uid("t");
      const long = (w: string) => `${w} ${"lorem ipsum dolor sit amet ".repeat(40)}`;
      for (const word of ["alpha", "bravo", "charlie", "delta"]) await run(memory, user, thread, long(`say ${word}`), [{ text: `ok ${word}` }]);
      const last = await run(memory, user, thread, "say echo", [{ text: "done" }]);
      const history = seen(last.prompts[0]!, ["say alpha", "say bravo", "say charlie", "say delta", "ok delta"]);
      return {
        "the oldest messages are trimmed": !history.includes("say alpha"),
        "the newest exchange is kept": history.includes("ok delta"),
        "stored messages": (await stored(memory, thread, user)).length,
      };
    },
  },
  ...(["resource", "thread"] as const).map((scope): Scenario => ({
    name: `working memory (template, ${scope} scope)`,
    async run(side) {
      const memory = side.memory(WM_ON(scope), { stack: "template" });
      const user = uid("wm");
      const thread = uid("t");
      const first = await run(memory, user, thread, "Hi, I am Ana from Porto", [
        { toolCalls: [{ name: "updateWorkingMemory", input: { memory: FILLED } }] },
        { text: "Nice to meet you, Ana." },
      ]);
      const other = uid("o");
      const next = await run(memory, user, other, "Where do I live?", [{ text: "Porto." }]);
      const jsonSent = await run(memory, user, thread, "Call me Ana Maria", [
        { toolCalls: [{ name: "updateWorkingMemory", input: { memory: { name: "Ana Maria" } } }] },
        { text: "Sure." },
      ]);
      return {
        "tools offered": first.tools[0],
        "instructions hold the template": first.prompts[0]!.includes("**City**:"),
        "getWorkingMemory, same thread (after the tool)": (await memory.getWorkingMemory({ threadId: thread, resourceId: user })) === FILLED ? "the document sent" : "other",
        "getWorkingMemory, another thread": await memory.getWorkingMemory({ threadId: other, resourceId: user }).then((wm) => (wm === null ? null : wm.includes("Porto") ? "the document sent" : "other")),
        "another thread's prompt has it": next.prompts[0]!.includes("City**: Porto"),
        "stored messages of the first run": await stored(memory, thread, user).then((m) => m.slice(0, 2)),
        "the model sends an object in template mode": toolFailed(jsonSent.prompts[1]) ? "the tool answers an error" : "accepted",
        "working memory after the object": await memory.getWorkingMemory({ threadId: thread, resourceId: user }).then((wm) => (wm === FILLED ? "unchanged" : wm?.trimStart().startsWith("{") ? "replaced by JSON" : "other")),
      };
    },
  })),
  ...(["resource", "thread"] as const).map((scope): Scenario => ({
    name: `working memory (schema, ${scope} scope)`,
    async run(side) {
      const memory = side.memory(WM_ON(scope), { stack: "schema" });
      const user = uid("ws");
      const thread = uid("t");
      const first = await run(memory, user, thread, "I'm Bo, a vegetarian from Braga", [
        { toolCalls: [{ name: "updateWorkingMemory", input: { memory: { name: "Bo" } } }] },
        { toolCalls: [{ name: "updateWorkingMemory", input: { memory: { city: "Braga", diet: ["vegetarian"] } } }] },
        { text: "Got it." },
      ]);
      const parse = (wm: string | null) => (wm === null ? null : JSON.parse(wm));
      const asText = await run(memory, user, thread, "Actually Faro", [
        { toolCalls: [{ name: "updateWorkingMemory", input: { memory: JSON.stringify({ city: "Faro" }) } }] },
        { text: "Faro." },
      ]);
      return {
        "an object as memory (Mastra's tool input)": toolFailed(first.prompts[1]) ? "refused" : "accepted",
        "JSON text as memory": toolFailed(asText.prompts[1]) ? "refused" : "accepted",
        "getWorkingMemory": parse(await memory.getWorkingMemory({ threadId: thread, resourceId: user })),
        "getWorkingMemory, another thread": parse(await memory.getWorkingMemory({ threadId: uid("o"), resourceId: user })),
        "thread metadata.workingMemory": scope === "thread" ? ((await threadById(memory, thread, user))?.metadata?.workingMemory ?? null) : "n/a",
      };
    },
  })),
  {
    name: "seeding working memory",
    async run(side) {
      const memory = side.memory(WM_ON("resource"), { stack: "template" });
      const user = uid("sd");
      const thread = await memory.createThread({ resourceId: user, threadId: uid("t"), title: "seeded", metadata: { workingMemory: FILLED, topic: "travel" } });
      const out: Observations = {
        "createThread with metadata.workingMemory": await memory.getWorkingMemory({ threadId: thread.id, resourceId: user }),
        "another thread of the user": await memory.getWorkingMemory({ threadId: uid("o"), resourceId: user }),
        "the thread's other metadata": thread.metadata?.topic ?? null,
      };
      await memory.updateThread({ id: thread.id, title: "seeded", metadata: { workingMemory: FILLED.replace("Porto", "Lisbon") } });
      out["updateThread with metadata.workingMemory"] = await memory.getWorkingMemory({ threadId: thread.id, resourceId: user });
      const schema = side.memory(WM_ON("thread"), { stack: "schema" });
      const seeded = await schema.createThread({ resourceId: user, threadId: uid("s"), metadata: { workingMemory: JSON.stringify({ name: "Bo", city: "Faro" }) } });
      out["schema mode, JSON text seed"] = JSON.parse((await schema.getWorkingMemory({ threadId: seeded.id, resourceId: user })) ?? "null");
      return out;
    },
  },
  ...(["resource", "thread"] as const).map((scope): Scenario => ({
    name: `semantic recall (${scope} scope)`,
    async run(side) {
      const memory = side.memory({ lastMessages: 2, semanticRecall: { topK: 1, messageRange: 1, scope } });
      const user = uid("sr");
      const old = uid("old");
      const here = uid("here");
      const lines: [string, string, string][] = [
        [old, "My sister Marisol lives in Valparaiso", "Valparaiso is lovely."],
        [old, "I collect antique typewriters", "What a hobby!"],
        [old, "The weather is grey today", "Sorry to hear."],
        [here, "I repair typewriters on Sundays", "Nice."],
        [here, "Unrelated: I like jazz", "Good."],
        [here, "And I bake bread", "Yum."],
      ];
      for (const [thread, said, answer] of lines) await run(memory, user, thread, said, [{ text: answer }]);
      await side.indexed(memory, user, "typewriters", 2);
      const asked = await run(memory, user, here, "Which antique typewriters do I collect?", [{ text: "Some." }]);
      const prompt = asked.prompts[0]!;
      const probes = lines.flatMap(([, said, answer]) => [said, answer]);
      return {
        "messages in the prompt": seen(prompt, probes),
        "from other threads, in the remembered block": seen(otherThreadsBlock(prompt), probes),
      };
    },
  })),
  {
    name: "readOnly",
    async run(side) {
      const memory = side.memory({ lastMessages: 5, ...WM_ON("resource") }, { stack: "template" });
      const user = uid("ro");
      const thread = uid("t");
      await run(memory, user, thread, "first words", [{ text: "first answer" }]);
      const ro = await run(memory, user, thread, "second words", [{ text: "read only answer" }], { memoryOptions: { readOnly: true } });
      return {
        "history in the prompt": seen(ro.prompts[0]!, ["first words", "first answer"]),
        "tools offered": ro.tools[0],
        "stored messages": await stored(memory, thread, user),
      };
    },
  },
  {
    name: "agentId",
    async run(side) {
      const memory = side.memory(WM_ON("resource"), { stack: "template", agentId: "planner" });
      const user = uid("ag");
      const thread = uid("t");
      await run(memory, user, thread, "I'm Ana from Porto", [
        { toolCalls: [{ name: "updateWorkingMemory", input: { memory: FILLED } }] },
        { text: "Hi Ana." },
      ], { agent: "planner" });
      const next = await run(memory, user, uid("o"), "Where do I live?", [{ text: "Porto." }], { agent: "planner" });
      return {
        "getWorkingMemory after the agent's tool call": (await memory.getWorkingMemory({ threadId: thread, resourceId: user })) === FILLED,
        "the agent's next run sees it": next.prompts[0]!.includes("City**: Porto"),
      };
    },
  },
  {
    name: "titles",
    async run(side) {
      const plain = side.memory({});
      const user = uid("ti");
      const thread = uid("t");
      await run(plain, user, thread, "Plan a trip to Kyoto", [{ text: "Sure." }]);
      const titled = side.memory({ generateTitle: true });
      const other = uid("g");
      const answer = await run(titled, user, other, "Plan a trip to Kyoto", [{ text: "Kyoto Trip" }]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const title = (await threadById(titled, other, user))?.title ?? null;
      return {
        "title of a thread the agent created": ((await threadById(plain, thread, user))?.title ?? "").replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, "<time>"),
        "generateTitle: true": title === "Kyoto Trip" ? "the model's title" : title?.startsWith("New Thread") ? "not generated" : title,
        "model calls of the run": answer.prompts.length,
      };
    },
  },
  {
    name: "messages and deletes",
    async run(side) {
      const memory = side.memory({ lastMessages: 20 });
      const user = uid("dl");
      const thread = uid("t");
      for (const word of ["one", "two"]) await run(memory, user, thread, `say ${word}`, [{ text: `ok ${word}` }]);
      const all = (await memory.recall({ threadId: thread, resourceId: user, perPage: false })).messages;
      await memory.saveMessages({ messages: all });
      const page = await memory.recall({ threadId: thread, resourceId: user, perPage: 1, page: 0 });
      const out: Observations = {
        "messages": all.map((m) => `${m.role}: ${textOf(m)}`),
        "saving them again": (await stored(memory, thread, user)).length,
        "page 0 of 1 per page": { texts: page.messages.map(textOf), total: page.total, hasMore: page.hasMore },
        "deleting an older message alone": await settle(() => memory.deleteMessages([all[0]!.id])).then((e) => (e ? "refused" : "deleted")),
      };
      out["after it"] = await stored(memory, thread, user);
      await memory.deleteMessages([all.at(-1)!.id]);
      out["after deleting the newest"] = await stored(memory, thread, user);
      await memory.deleteThread(thread);
      out["recall after deleteThread"] = await stored(memory, thread, user).catch(() => "error");
      return out;
    },
  },
];
