// A Mastra agent whose memory is mongomem. Run with `make dev` going (or MONGOMEM_URL set):
//   node agent.mjs
// The model is the AI SDK's mock (no LLM, no key): replace the line marked `// model` with a real one.
import { Agent } from "@mastra/core/agent";
import { MongomemMemory } from "@mongomem/client/mastra";
import { MockLanguageModelV4 } from "ai/test";

const memory = new MongomemMemory({
  options: {
    lastMessages: 10,
    workingMemory: { enabled: true, scope: "resource" },
    semanticRecall: { topK: 2, messageRange: 1, scope: "resource" },
  },
});

const model = scripted(); // model
const agent = new Agent({ id: "concierge", name: "concierge", instructions: "You are a travel concierge.", model, memory });

const user = `ana-${Date.now()}`;
const first = `trip-${Date.now()}`;
const second = `${first}-later`;

const one = await agent.generate("Hi, I'm Ana from Porto. I collect antique typewriters.", { memory: { thread: first, resource: user } });
console.log(`run 1 (${first}): ${one.text}`);
const recorded = await memory.client.listTurns(first, { user_id: user });
console.log(`recorded turns: ${recorded.turns.map((t) => `${t.seq}:${t.role}`).join(" ")}`);
console.log(`working memory: ${JSON.stringify(await memory.getWorkingMemory({ threadId: first, resourceId: user }))}`);

// `make dev` embeds new turns for recall on its next scan (every 5 s)
let indexed = false;
const waitS = Number(process.env.MONGOMEM_QUICKSTART_WAIT_S ?? 30);
for (let i = 0; i < waitS * 2 && !indexed; i++) {
  indexed = (await memory.client.recall({ query: "typewriters", user_id: user, top_k: 1 })).matched.length > 0;
  if (!indexed) await new Promise((resolve) => setTimeout(resolve, 500));
}
if (!indexed) console.error(`thread 1 was not indexed for recall within ${waitS} s`);

const two = await agent.generate("What do I collect, and where am I from?", { memory: { thread: second, resource: user } });
console.log(`run 2 (${second}): ${two.text}`);
const seen = JSON.stringify(model.prompts.at(-1));
const hadWorkingMemory = seen.includes("Location**: Porto");
const recalled = seen.includes("remembered_from_other_conversation") && seen.includes("antique typewriters");
console.log(`run 2 prompt had the working memory: ${hadWorkingMemory}`);
console.log(`run 2 prompt recalled thread 1 across threads: ${recalled}`);
if (!hadWorkingMemory || !recalled) {
  // a quickstart that prints "false" and exits 0 hides a broken stack: say what is missing, and fail
  console.error(
    `quickstart FAILED: ${!hadWorkingMemory ? "the working memory was not in the prompt; " : ""}` +
      `${!recalled ? "nothing was recalled across threads (is the recall indexer running? `mongomem dev` scans every few seconds; GET /v1/status shows its lag)" : ""}`,
  );
  process.exitCode = 1;
}

/** A stand-in model: it updates working memory on the first message and answers from what the prompt holds. */
function scripted() {
  const prompts = [];
  const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
  const reply = (prompt) => {
    prompts.push(prompt);
    const text = JSON.stringify(prompt);
    const lastTool = prompt.at(-1)?.role === "tool";
    if (text.includes("I'm Ana from Porto") && !lastTool && !text.includes("What do I collect")) {
      const memory = "# User Information\n- **First Name**: Ana\n- **Location**: Porto\n- **Interests**: antique typewriters\n";
      return [{ type: "tool-call", toolCallId: "call-1", toolName: "updateWorkingMemory", input: JSON.stringify({ memory }) }];
    }
    const collects = text.includes("antique typewriters") ? "antique typewriters" : "something I do not know";
    const from = text.includes("Location**: Porto") ? "Porto" : "somewhere I do not know";
    return [{ type: "text", text: lastTool ? "Nice to meet you, Ana." : `You collect ${collects} and you are from ${from}.` }];
  };
  const finish = (content) => ({ unified: content.some((c) => c.type === "tool-call") ? "tool-calls" : "stop", raw: undefined });
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const content = reply(prompt);
      return { content, finishReason: finish(content), usage, warnings: [] };
    },
    doStream: async ({ prompt }) => {
      const content = reply(prompt);
      const parts = [{ type: "stream-start", warnings: [] }];
      for (const c of content) {
        if (c.type === "text") parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: c.text }, { type: "text-end", id: "t" });
        else parts.push(c);
      }
      parts.push({ type: "finish", finishReason: finish(content), usage });
      return { stream: new ReadableStream({ start(c) { parts.forEach((p) => c.enqueue(p)); c.close(); } }) };
    },
  });
  return Object.assign(model, { prompts });
}
