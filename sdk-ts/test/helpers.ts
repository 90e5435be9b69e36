/** Shared by the tests: the stacks the test run started, unique ids, and a scripted language model. */
import { MockLanguageModelV4 } from "ai/test";
import { MongomemClient } from "@mongomem/client";

/** The local stack `make test` started (template working memory, resource scope). */
export const BASE_URL = required("MONGOMEM_TEST_URL");
/** A second stack whose working memory is a JSON Schema, thread scope. */
export const SCHEMA_URL = required("MONGOMEM_TEST_SCHEMA_URL");

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through tests/e2e/test_typescript.py (make test), which starts the local stacks`);
  return value;
}

export function uid(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

export function client(baseUrl = BASE_URL): MongomemClient {
  return new MongomemClient({ baseUrl, backoffMs: 10 });
}

/** Wait until `check` holds (the scan embeds new turns for recall within a second or two). */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export type Step = { text: string } | { toolCalls: { name: string; input: unknown }[] };

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/**
 * A language model that answers from a script, one step per model call (the AI SDK's MockLanguageModelV4),
 * and keeps every prompt it was given so a test can read what the memory put in front of the model.
 */
export function scriptedModel(steps: Step[]): MockLanguageModelV4 & { prompts: unknown[][] } {
  let next = 0;
  const prompts: unknown[][] = [];
  const take = (prompt: unknown[]): Step => {
    prompts.push(prompt);
    return steps[Math.min(next++, steps.length - 1)]!;
  };
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      const step = take(options.prompt as unknown[]);
      if ("text" in step) {
        return { content: [{ type: "text", text: step.text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      }
      return {
        content: step.toolCalls.map((call, i) => ({ type: "tool-call", toolCallId: `call-${next}-${i}`, toolName: call.name, input: JSON.stringify(call.input) })),
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
    doStream: async (options) => {
      const step = take(options.prompt as unknown[]);
      const parts: unknown[] = [{ type: "stream-start", warnings: [] }];
      if ("text" in step) {
        parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: step.text }, { type: "text-end", id: "t" });
        parts.push({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage });
      } else {
        step.toolCalls.forEach((call, i) => parts.push({ type: "tool-call", toolCallId: `call-${next}-${i}`, toolName: call.name, input: JSON.stringify(call.input) }));
        parts.push({ type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage });
      }
      return { stream: new ReadableStream({ start(controller) { for (const p of parts) controller.enqueue(p); controller.close(); } }) } as never;
    },
  });
  return Object.assign(model, { prompts });
}

/** Every text the model was shown in one call (system and messages), joined. */
export function promptText(prompt: unknown[]): string {
  return JSON.stringify(prompt);
}

/** A model that answers "ok" to everything: what the documented snippets run with instead of a real one. */
export function echoModel(): MockLanguageModelV4 & { prompts: unknown[][] } {
  return scriptedModel([{ text: "ok" }]);
}
