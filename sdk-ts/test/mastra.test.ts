/**
 * MongomemMemory as a Mastra Agent's memory (@mastra/core's Agent, a scripted AI SDK model), against the local
 * stacks; Mastra's documented memory behaviours are checked side by side with Mastra's own Memory
 * (@mastra/memory over @mastra/core's InMemoryStore) where both can run.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { Agent } from "@mastra/core/agent";
import type { MastraDBMessage } from "@mastra/core/agent/message-list";
import { InMemoryStore } from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { Memory } from "@mastra/memory";
import { MongomemMemory } from "@mongomem/client/mastra";
import { z } from "zod";

import { BASE_URL, SCHEMA_URL, client, eventually, promptText, scriptedModel, uid, type Step } from "./helpers.js";

function agentWith(memory: MongomemMemory | Memory, steps: Step[], tools = {}) {
  const model = scriptedModel(steps);
  // the cast: Mastra bundles its own copy of the provider types (a patch version behind ai's)
  const agent = new Agent({ id: "assistant", name: "assistant", instructions: "You are a helpful assistant.", model: model as never, memory, tools });
  return { agent, model };
}

const TEMPLATE_WM = "# User\n- **Name**: Ana\n- **City**: Porto\n";

test("an agent run records its turns in the thread, and the next run is given them as history", async () => {
  const memory = new MongomemMemory({ client: client(), agentId: "assistant", options: { lastMessages: 10 } });
  const user = uid("ana");
  const thread = uid("chat");
  const first = agentWith(memory, [{ text: "Grilled sardines it is." }]);
  await first.agent.generate("What should I eat in Porto?", { memory: { thread, resource: user } });
  const turns = await client().listTurns(thread, { user_id: user });
  assert.deepEqual(turns.turns.map((t) => [t.role, t.content]), [["user", "What should I eat in Porto?"], ["assistant", "Grilled sardines it is."]]);
  assert.equal(turns.turns[0]!.metadata?.source, "mastra");
  assert.deepEqual((await client().listThreads({ user_id: user })).threads.map((t) => t.thread_id), [thread]);
  const session = await client().getSession(thread, { user_id: user });
  assert.equal(session.agent_id, "assistant");
  // When the conversation goes on in a second run (a fresh memory instance: nothing cached)
  const again = agentWith(new MongomemMemory({ client: client(), options: { lastMessages: 10 } }), [{ text: "Francesinha, then." }]);
  await again.agent.generate("Something else?", { memory: { thread, resource: user } });
  // Then the model saw the first exchange, once, before the new message
  const prompt = promptText(again.model.prompts[0]!);
  assert.ok(prompt.indexOf("What should I eat in Porto?") < prompt.indexOf("Something else?"));
  assert.equal(prompt.split("Grilled sardines it is.").length - 1, 1);
  assert.equal((await client().listTurns(thread, { user_id: user })).turns.length, 4);
});

test("lastMessages bounds the history the model gets", async () => {
  const user = uid("ana");
  const thread = uid("chat");
  const memory = new MongomemMemory({ client: client(), options: { lastMessages: 2 } });
  for (const word of ["alpha", "bravo", "charlie"]) {
    await agentWith(memory, [{ text: `ok ${word}` }]).agent.generate(`say ${word}`, { memory: { thread, resource: user } });
  }
  const last = agentWith(memory, [{ text: "done" }]);
  await last.agent.generate("say delta", { memory: { thread, resource: user } });
  const prompt = promptText(last.model.prompts[0]!);
  assert.ok(prompt.includes("say charlie") && prompt.includes("ok charlie"));
  assert.ok(!prompt.includes("bravo"), "only the last 2 messages");
});

test("working memory (template, resource scope): the tool call updates it and every thread of the user reads it", async () => {
  const memory = new MongomemMemory({ client: client(), options: { workingMemory: { enabled: true, scope: "resource" } } });
  const user = uid("ana");
  const { agent, model } = agentWith(memory, [
    { toolCalls: [{ name: "updateWorkingMemory", input: { memory: TEMPLATE_WM } }] },
    { text: "Nice to meet you, Ana." },
  ]);
  await agent.generate("Hi, I am Ana from Porto", { memory: { thread: uid("t"), resource: user } });
  // the instructions carried the project's template
  assert.match(promptText(model.prompts[0]!), /WORKING_MEMORY_SYSTEM_INSTRUCTION[\s\S]*\*\*Name\*\*:/);
  const other = uid("t");
  assert.equal(await memory.getWorkingMemory({ threadId: other, resourceId: user }), TEMPLATE_WM);
  const next = agentWith(memory, [{ text: "You live in Porto." }]);
  await next.agent.generate("Where do I live?", { memory: { thread: other, resource: user } });
  assert.match(promptText(next.model.prompts[0]!), /<working_memory_data>\\n# User\\n- \*\*Name\*\*: Ana\\n- \*\*City\*\*: Porto/);
  // Mastra never stores the working-memory tool call in the history
  const threadsTurns = await client().listThreads({ user_id: user });
  assert.equal(threadsTurns.threads.length, 2);
  const template = await memory.getWorkingMemoryTemplate({});
  assert.deepEqual(template, { format: "markdown", content: "# User\n- **Name**:\n- **City**:" });
});

test("Mastra's documented seeding: metadata.workingMemory on a new thread becomes the working memory (as in @mastra/memory)", async () => {
  const mastra = new Memory({ storage: new InMemoryStore(), options: { workingMemory: { enabled: true, scope: "resource", template: "# User\n- **Name**:\n- **City**:\n" } } });
  const ours = new MongomemMemory({ client: client(), options: { workingMemory: { enabled: true, scope: "resource" } } });
  const results = [];
  for (const memory of [mastra, ours]) {
    const user = uid("seed");
    const thread = await memory.createThread({ resourceId: user, threadId: uid("t"), title: "seeded", metadata: { workingMemory: TEMPLATE_WM, topic: "travel" } });
    results.push({
      sameThread: await memory.getWorkingMemory({ threadId: thread.id, resourceId: user }),
      otherThread: await memory.getWorkingMemory({ threadId: uid("t"), resourceId: user }),
      title: thread.title,
      topic: thread.metadata?.topic,
    });
  }
  assert.deepEqual(results[1], results[0]);
  assert.equal(results[1]!.otherThread, TEMPLATE_WM);
});

test("working memory (schema, thread scope): partial updates merge, threads are isolated, seeding takes JSON (as in @mastra/memory)", async () => {
  const memory = new MongomemMemory({ client: client(SCHEMA_URL), options: { workingMemory: { enabled: true, scope: "thread" } } });
  const user = uid("bo");
  const threadA = uid("a");
  const { agent } = agentWith(memory, [
    { toolCalls: [{ name: "updateWorkingMemory", input: { memory: { name: "Bo" } } }] },
    { toolCalls: [{ name: "updateWorkingMemory", input: { memory: { city: "Braga", diet: ["vegetarian"] } } }] },
    { text: "Got it." },
  ]);
  await agent.generate("I'm Bo, a vegetarian from Braga", { memory: { thread: threadA, resource: user } });
  assert.deepEqual(JSON.parse((await memory.getWorkingMemory({ threadId: threadA, resourceId: user }))!), { name: "Bo", city: "Braga", diet: ["vegetarian"] });
  // thread scope: another thread of the same user starts empty (Mastra: "isolated per conversation thread")
  const threadB = uid("b");
  assert.equal(await memory.getWorkingMemory({ threadId: threadB, resourceId: user }), null);
  // the thread's record carries it, as Mastra keeps thread-scoped working memory in thread.metadata (JSON text)
  const stored = await memory.getThreadById({ threadId: threadA, resourceId: user });
  assert.deepEqual(JSON.parse(String(stored?.metadata?.workingMemory)), { name: "Bo", city: "Braga", diet: ["vegetarian"] });
  // seeding a new thread with the JSON text, side by side with Mastra's Memory (schema mode, thread scope)
  const schema = z.object({ name: z.string().optional(), city: z.string().optional(), diet: z.array(z.string()).optional() });
  const mastra = new Memory({ storage: new InMemoryStore(), options: { workingMemory: { enabled: true, scope: "thread", schema } } });
  const seen = [];
  for (const m of [mastra, memory]) {
    const seeded = await m.createThread({ resourceId: user, threadId: uid("s"), metadata: { workingMemory: JSON.stringify({ name: "Bo", city: "Faro" }) } });
    seen.push({
      seeded: JSON.parse((await m.getWorkingMemory({ threadId: seeded.id, resourceId: user }))!),
      neighbour: await m.getWorkingMemory({ threadId: uid("n"), resourceId: user }),
    });
  }
  assert.deepEqual(seen[1], seen[0]);
  const template = await memory.getWorkingMemoryTemplate({});
  assert.equal(template?.format, "json");
  assert.ok(JSON.stringify(template?.content).includes("diet"));
});

test("a template or schema in the Mastra options is refused: the project's is the one every client shares", () => {
  assert.throws(
    () => new MongomemMemory({ client: client(), options: { workingMemory: { enabled: true, template: "# Mine" } } }),
    /project-config.yaml/,
  );
});

test("every Mastra memory option is honoured or refused at construction, never ignored", () => {
  const refused: [string, Record<string, unknown>, RegExp][] = [
    ["observationalMemory's model", { observationalMemory: { model: "openai/gpt-4o-mini" } }, /observationalMemory.model/],
    ["observationalMemory's reflection budget", { observationalMemory: { reflection: { observationTokens: 9 } } }, /memory.observations/],
    ["observationalMemory's scope", { observationalMemory: { scope: "everyone" } }, /observationalMemory.scope/],
    ["useStateSignals", { workingMemory: { enabled: true, useStateSignals: true } }, /useStateSignals/],
    ["semanticRecall.filter", { semanticRecall: { topK: 2, messageRange: 1, filter: { a: 1 } } }, /semanticRecall.filter/],
    ["semanticRecall.indexConfig", { semanticRecall: { topK: 2, messageRange: 1, indexConfig: { type: "hnsw" } } }, /indexConfig/],
    ["retainFullInput", { retainFullInput: true }, /retainFullInput/],
    ["filterIncompleteToolCalls", { filterIncompleteToolCalls: false }, /filterIncompleteToolCalls/],
    ["messageHistory without maxTokens", { messageHistory: {} }, /maxTokens/],
    ["an unknown option", { threads: { generateTitle: true } }, /`threads`/],
  ];
  for (const [what, options, error] of refused) {
    assert.throws(() => new MongomemMemory({ client: client(), options: options as never }), error, what);
  }
  // Mastra's defaults and every honoured option are accepted
  new MongomemMemory({
    client: client(),
    options: {
      readOnly: false, lastMessages: 5, messageHistory: { maxTokens: 4000 }, observationalMemory: { enabled: true, scope: "resource" }, generateTitle: true,
      filterIncompleteToolCalls: true, retainFullInput: false,
      semanticRecall: { topK: 2, messageRange: 1, scope: "thread", threshold: 0.2 }, workingMemory: { enabled: true, scope: "thread", agentManaged: true },
    },
  });
});

async function talk(memory: MongomemMemory, user: string, thread: string, lines: [string, string][]) {
  for (const [said, answer] of lines) {
    await agentWith(memory, [{ text: answer }]).agent.generate(said, { memory: { thread, resource: user } });
  }
}

test("semantic recall through /v1/recall: topK matches with messageRange neighbours from other threads (scope resource)", async () => {
  const user = uid("cy");
  const old = uid("old");
  const memory = new MongomemMemory({
    client: client(),
    options: { lastMessages: 4, semanticRecall: { topK: 1, messageRange: 1, scope: "resource" } },
  });
  await talk(memory, user, old, [
    ["My sister Marisol lives in Valparaiso", "Valparaiso is lovely."],
    ["I collect antique typewriters", "What a hobby!"],
    ["The weather is grey today", "Sorry to hear."],
  ]);
  await eventually(async () => (await client().recall({ query: "typewriters", user_id: user, top_k: 1 })).matched.length > 0, "the old thread to be indexed");
  const { agent, model } = agentWith(memory, [{ text: "You collect typewriters." }]);
  await agent.generate("Which antique typewriters do I collect?", { memory: { thread: uid("new"), resource: user } });
  const prompt = promptText(model.prompts[0]!);
  const block = /remembered_from_other_conversation>([\s\S]*?)<end_remembered_from_other_conversation/.exec(prompt)?.[1] ?? "";
  // the match, the message before and the message after (messageRange 1), nothing further away
  assert.match(block, /User: I collect antique typewriters/);
  assert.match(block, /Assistant: Valparaiso is lovely/);
  assert.match(block, /Assistant: What a hobby!/);
  assert.doesNotMatch(block, /Marisol|grey/);
  // inside mongomem's marker: another conversation's words are data, and an echo is never learnt again
  assert.match(prompt, /<mongomem-memory source=\\"recall\\" token=\\"[a-z2-7]{10}\\">[\s\S]*remembered_from_other_conversation>/);
});

test("semantic recall scope thread: messages of other threads are never recalled", async () => {
  const user = uid("dee");
  const memory = new MongomemMemory({ client: client(), options: { lastMessages: 1, semanticRecall: { topK: 3, messageRange: 0, scope: "thread" } } });
  const thread = uid("here");
  await talk(memory, user, uid("elsewhere"), [["My passport number ends in 4471", "Noted."]]);
  await talk(memory, user, thread, [["I renew my passport in June", "Good to know."], ["Unrelated: I like jazz", "Nice."]]);
  await eventually(async () => (await client().recall({ query: "passport", user_id: user, top_k: 5 })).matched.length >= 2, "both threads indexed");
  const { agent, model } = agentWith(memory, [{ text: "In June." }]);
  await agent.generate("When do I renew my passport?", { memory: { thread, resource: user } });
  const prompt = promptText(model.prompts[0]!);
  assert.match(prompt, /I renew my passport in June/);
  assert.doesNotMatch(prompt, /4471|remembered_from_other_conversation/);
});

test("long-term memories reach the agent as context and through the searchMemories tool", async () => {
  const user = uid("eli");
  await client().createMemory({ user_id: user, type: "semantic", payload: { subject: user, attribute: "favourite dish", value: "bacalhau a bras" } });
  const memory = new MongomemMemory({ client: client() });
  const { agent, model } = agentWith(memory, [
    { toolCalls: [{ name: "searchMemories", input: { query: "favourite dish" } }] },
    { text: "Bacalhau a bras." },
  ]);
  await agent.generate("What is my favourite dish?", { memory: { thread: uid("t"), resource: user } });
  assert.match(promptText(model.prompts[0]!), /mongomem-memory[\s\S]*bacalhau a bras/);
  const toolResult = promptText(model.prompts[1]!);
  assert.match(toolResult, /tool-result[\s\S]*bacalhau a bras/);
  // the memories the tool found reach the model inside the marker (anyone's words: issue 33's 27th probe)
  assert.match(toolResult, /<mongomem-memory source=\\"search\\" token=\\"([a-z2-7]{10})\\">[\s\S]*?bacalhau a bras[\s\S]*?<\/mongomem-memory token=\\"\1\\">/);
});

test("observationalMemory: the server's observation log opens the prompt, the same bytes until the log changes", async () => {
  const user = uid("oli");
  const first = uid("t");
  const memory = new MongomemMemory({ client: client(), options: { lastMessages: 4, observationalMemory: { scope: "resource" } } });
  await talk(memory, user, first, [["I adopted a cat named Luna last week.", "Lovely!"]]);
  // When the thread is promoted and extracted, the server writes the user's observations
  await client().flush(first, { user_id: user });
  const observed = async () => {
    const { agent, model } = agentWith(memory, [{ text: "ok" }]);
    await agent.generate("What should I buy?", { memory: { thread: uid("t"), resource: user, options: { readOnly: true } } });
    const prompt = promptText(model.prompts[0]!);
    return prompt.includes("## Observations") ? prompt : null;
  };
  const prompt = await eventually(observed, "the observation block in the prompt");
  // Then a new thread's first prompt opens with the dated log (scope resource: across threads)
  assert.match(prompt, /## Observations\\n\d+ \w+ \d{4}:\\n- User: I adopted a cat named Luna last week/);
  assert.ok(prompt.indexOf("## Observations") < prompt.indexOf("What should I buy?"));
  // ... and the block is the same bytes on the next run
  const block = (p: string) => p.slice(p.indexOf("## Observations"), p.indexOf("</mongomem", p.indexOf("## Observations")));
  assert.equal(block((await observed())!), block(prompt));
  // while a thread-scoped memory of another thread sees none of it
  const threadScoped = new MongomemMemory({ client: client(), options: { lastMessages: 4, observationalMemory: true } });
  const { agent, model } = agentWith(threadScoped, [{ text: "ok" }]);
  await agent.generate("Hello", { memory: { thread: uid("t"), resource: user, options: { readOnly: true } } });
  assert.doesNotMatch(promptText(model.prompts[0]!), /Luna/);
});

test("readOnly runs read memory but record nothing", async () => {
  const user = uid("fay");
  const thread = uid("t");
  const memory = new MongomemMemory({ client: client(), options: { lastMessages: 5 } });
  await talk(memory, user, thread, [["first words", "first answer"]]);
  const { agent, model } = agentWith(memory, [{ text: "read only answer" }]);
  await agent.generate("second words", { memory: { thread, resource: user, options: { readOnly: true } } });
  assert.match(promptText(model.prompts[0]!), /first answer/);
  assert.equal((await client().listTurns(thread, { user_id: user })).turns.length, 2);
});

test("messages read back as they were saved: ids, tool calls and results; recall pages; tail deletes", async () => {
  const user = uid("gus");
  const thread = uid("t");
  const memory = new MongomemMemory({ client: client(), options: { lastMessages: 20 } });
  const weather = createTool({
    id: "weather",
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, forecast: "sunny" }),
  });
  const { agent } = agentWith(memory, [{ toolCalls: [{ name: "weather", input: { city: "Porto" } }] }, { text: "Sunny in Porto." }], { weather });
  await agent.generate("Weather in Porto?", { memory: { thread, resource: user } });
  const turns = (await client().listTurns(thread, { user_id: user })).turns;
  const assistant = turns.find((t) => t.tool_calls?.length);
  assert.equal(assistant?.tool_calls?.[0]?.name, "weather");
  assert.deepEqual(assistant?.tool_calls?.[0]?.arguments, { city: "Porto" });
  const read = await memory.recall({ threadId: thread, resourceId: user, perPage: false });
  const saved = read.messages.filter((m) => m.role === "assistant");
  const invocation = saved.flatMap((m) => m.content.parts).find((p) => p.type === "tool-invocation") as Extract<MastraDBMessage["content"]["parts"][number], { type: "tool-invocation" }> | undefined;
  assert.equal(invocation?.toolInvocation.state, "result");
  assert.deepEqual((invocation?.toolInvocation as { result?: unknown }).result, { city: "Porto", forecast: "sunny" });
  assert.ok(read.messages.every((m) => m.createdAt instanceof Date && m.threadId === thread && m.resourceId === user));
  // saving the same messages again records nothing (Mastra's storage upserts by id)
  await memory.saveMessages({ messages: read.messages });
  assert.equal((await client().listTurns(thread, { user_id: user })).turns.length, turns.length);
  // pages: newest first, each in time order
  const page0 = await memory.recall({ threadId: thread, resourceId: user, perPage: 1, page: 0 });
  assert.deepEqual(page0.messages.map((m) => m.id), [read.messages.at(-1)!.id]);
  assert.equal(page0.total, read.messages.length);
  assert.equal(page0.hasMore, true);
  // deleting the newest message works; deleting an older one alone is refused before anything is deleted
  await assert.rejects(memory.deleteMessages([read.messages[0]!.id]), /newest/);
  await memory.deleteMessages([read.messages.at(-1)!.id]);
  assert.equal((await memory.recall({ threadId: thread, resourceId: user, perPage: false })).messages.length, read.messages.length - 1);
});

test("threads: list with a metadata filter, clone, update, delete; a thread id is per user", async () => {
  const user = uid("hal");
  const memory = new MongomemMemory({ client: client() });
  const a = await memory.createThread({ resourceId: user, threadId: uid("a"), title: "A", metadata: { project: "x" } });
  await memory.createThread({ resourceId: user, threadId: uid("b"), title: "B", metadata: { project: "y" } });
  const listed = await memory.listThreads({ filter: { resourceId: user, metadata: { project: "x" } } });
  assert.deepEqual(listed.threads.map((t) => t.id), [a.id]);
  assert.equal(listed.total, 1);
  await talk(memory, user, a.id, [["hello clone", "hi"]]);
  const clone = await memory.cloneThread({ sourceThreadId: a.id, newThreadId: `${a.id}-c`, title: "A copy" });
  assert.equal(clone.thread.title, "A copy");
  assert.deepEqual(clone.clonedMessages.map((m) => textOfMessage(m)), ["hello clone", "hi"]);
  const renamed = await memory.updateThread({ id: a.id, title: "A renamed", metadata: { project: "z" } });
  assert.equal(renamed.title, "A renamed");
  assert.equal(renamed.metadata?.project, "z");
  await memory.deleteThread(a.id);
  assert.equal(await memory.getThreadById({ threadId: a.id, resourceId: user }), null);
  // the same thread id for another user is another thread (Mastra's ids are global; mongomem's are per user)
  const other = uid("ivy");
  const theirs = await memory.createThread({ resourceId: other, threadId: `${a.id}-c`, title: "theirs" });
  assert.equal(theirs.resourceId, other);
  assert.equal((await memory.getThreadById({ threadId: `${a.id}-c`, resourceId: user }))?.title, "A copy");
});

function textOfMessage(message: MastraDBMessage): string {
  return message.content.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
}

void BASE_URL;
