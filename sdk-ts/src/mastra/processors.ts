/**
 * The input and output processors a MongomemMemory gives an Agent: the places where Mastra's own Memory
 * runs MessageHistory, WorkingMemory and SemanticRecall over its storage and vector store, here served
 * by the mongomem API (turns, working memory, /v1/recall, /v1/context).
 */
import type { MastraDBMessage } from "@mastra/core/agent/message-list";
import { parseMemoryRequestContext, type MemoryConfigInternal } from "@mastra/core/memory";
import type { ProcessInputArgs, Processor, ProcessOutputResultArgs } from "@mastra/core/processors";

import { marked } from "../markers.js";
import { textOf } from "./messages.js";

/** What the processors need from the memory (kept narrow so they are easy to follow). */
export interface MemoryBackend {
  config(runtime?: MemoryConfigInternal): MemoryConfigInternal;
  historyMessages(threadId: string, resourceId: string, limit: number): Promise<MastraDBMessage[]>;
  persist(messages: MastraDBMessage[], threadId: string, resourceId: string): Promise<void>;
  workingMemoryInstructions(threadId: string, resourceId: string, config: MemoryConfigInternal): Promise<string | null>;
  semanticMatches(query: string, threadId: string, resourceId: string, config: MemoryConfigInternal, excludeIds: string[]): Promise<MastraDBMessage[]>;
  longTermContext(query: string, threadId: string, resourceId: string): Promise<string | null>;
  observationContext(threadId: string, resourceId: string): Promise<string | null>;
  log(message: string, error: unknown): void;
}

interface Ids {
  threadId: string;
  resourceId: string;
  config: MemoryConfigInternal;
}

function ids(memory: MemoryBackend, requestContext: ProcessInputArgs["requestContext"], messageList: ProcessInputArgs["messageList"]): Ids | null {
  const context = parseMemoryRequestContext(requestContext);
  const info = messageList.serialize().memoryInfo;
  const threadId = context?.thread?.id ?? info?.threadId;
  const resourceId = context?.resourceId ?? info?.resourceId;
  if (!threadId || !resourceId) return null;
  return { threadId, resourceId, config: memory.config(context?.memoryConfig) };
}

/** The latest user message's text: what recall and long-term context search for. */
function userQuery(messages: MastraDBMessage[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== "user") continue;
    const text = textOf(message);
    if (text) return text;
  }
  return null;
}

/** How many messages the history loads: `lastMessages` (default 10); with `messageHistory` alone, up to 200 (a token budget then bounds it). */
export function historyLimit(config: MemoryConfigInternal): number | false {
  const last = config.lastMessages;
  if (last === false) return false;
  if (typeof last === "number") return last;
  return tokenBudget(config) ? 200 : 10;
}

function tokenBudget(config: MemoryConfigInternal): { maxTokens: number; atMaxRemoveTokens: number } | null {
  const history = (config as { messageHistory?: { maxTokens?: number; atMaxRemoveTokens?: number } }).messageHistory;
  if (!history || typeof history.maxTokens !== "number" || history.maxTokens <= 0) return null;
  return { maxTokens: history.maxTokens, atMaxRemoveTokens: history.atMaxRemoveTokens ?? Math.ceil(history.maxTokens / 4) };
}

/** A message's size in tokens, estimated (about 4 characters a token, as the API's own estimate). */
export function estimateTokens(message: MastraDBMessage | { content: unknown }): number {
  const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? "");
  return Math.ceil(text.length / 4) + 4;
}

/**
 * `messageHistory.maxTokens`, as Mastra's MessageHistory: when the context (system messages, the remembered
 * history and the run's input) is over the budget, the oldest remembered messages are removed, freeing
 * `atMaxRemoveTokens` (default a quarter of the budget) below it; the input and system messages are never removed.
 */
export function trimHistory(history: MastraDBMessage[], kept: number, config: MemoryConfigInternal): MastraDBMessage[] {
  const budget = tokenBudget(config);
  if (!budget) return history;
  let total = kept + history.reduce((sum, m) => sum + estimateTokens(m), 0);
  if (total <= budget.maxTokens) return history;
  const target = Math.max(0, budget.maxTokens - budget.atMaxRemoveTokens);
  let start = 0;
  while (start < history.length && total > target) total -= estimateTokens(history[start++]!);
  return history.slice(start);
}

/** Loads the thread's last `lastMessages` messages before the model call; saves the run's new messages after it. */
export class MongomemMessageHistory implements Processor {
  readonly id = "message-history";
  readonly name = "MongomemMessageHistory";

  constructor(private readonly memory: MemoryBackend) {}

  async processInput({ messageList, requestContext }: ProcessInputArgs) {
    const found = ids(this.memory, requestContext, messageList);
    if (!found) return messageList;
    const limit = historyLimit(found.config);
    if (limit === false || limit <= 0) return messageList;
    const current = messageList.get.all.db();
    const present = new Set(current.map((m) => m.id));
    const loaded = (await this.memory.historyMessages(found.threadId, found.resourceId, limit)).filter((m) => !present.has(m.id));
    const kept = current.reduce((sum, m) => sum + estimateTokens(m), 0) + messageList.getAllSystemMessages().reduce((sum, m) => sum + estimateTokens(m), 0);
    const history = trimHistory(loaded, kept, found.config);
    if (history.length) messageList.add(history, "memory");
    return messageList;
  }

  async processOutputResult({ messageList, requestContext, result }: ProcessOutputResultArgs) {
    const found = ids(this.memory, requestContext, messageList);
    // Mastra: readOnly saves nothing, and `lastMessages: false` turns history off, loading and saving
    if (!found || found.config.readOnly || historyLimit(found.config) === false) return messageList;
    const input = messageList.get.input.db();
    const response = messageList.get.response.db();
    if (result?.finishReason === "error" && response.length === 0) return messageList;
    await this.memory.persist([...input, ...response], found.threadId, found.resourceId);
    return messageList;
  }
}

/** Working memory as a system instruction (the API renders it, template or schema, with the current data). */
export class MongomemWorkingMemory implements Processor {
  readonly id = "working-memory";
  readonly name = "MongomemWorkingMemory";

  constructor(private readonly memory: MemoryBackend) {}

  async processInput({ messageList, requestContext }: ProcessInputArgs) {
    const found = ids(this.memory, requestContext, messageList);
    if (!found) return messageList;
    const instructions = await this.memory.workingMemoryInstructions(found.threadId, found.resourceId, found.config);
    if (instructions) messageList.addSystem(instructions, "memory");
    return messageList;
  }
}

/**
 * Semantic recall through POST /v1/recall: the `topK` messages most like the user's message, with
 * `messageRange` neighbours; messages of this thread join the history, those of other threads
 * (scope `resource`) come as one system message, as Mastra's SemanticRecall does.
 */
export class MongomemSemanticRecall implements Processor {
  readonly id = "semantic-recall";
  readonly name = "MongomemSemanticRecall";

  constructor(private readonly memory: MemoryBackend) {}

  async processInput({ messages, messageList, requestContext }: ProcessInputArgs) {
    const found = ids(this.memory, requestContext, messageList);
    if (!found || !found.config.semanticRecall) return messageList;
    const query = userQuery(messages);
    if (!query) return messageList;
    const present = messageList.get.all.db();
    const presentIds = new Set(present.map((m) => m.id));
    let recalled: MastraDBMessage[];
    try {
      recalled = await this.memory.semanticMatches(query, found.threadId, found.resourceId, found.config, [...presentIds]);
    } catch (error) {
      this.memory.log("semantic recall failed; the run goes on without it", error);
      return messageList;
    }
    const fresh = recalled.filter((m) => !presentIds.has(m.id));
    const sameThread = fresh.filter((m) => m.threadId === found.threadId);
    const otherThreads = fresh.filter((m) => m.threadId !== found.threadId);
    if (otherThreads.length) messageList.addSystem(rememberedFromOtherThreads(otherThreads), "memory");
    if (sameThread.length) messageList.add(sameThread, "memory");
    return messageList;
  }
}

/** Long-term memories (facts, preferences, episodes, ... extracted by mongomem) relevant to the user's message. */
export class MongomemLongTermContext implements Processor {
  readonly id = "mongomem-long-term";
  readonly name = "MongomemLongTermContext";

  constructor(private readonly memory: MemoryBackend) {}

  async processInput({ messages, messageList, requestContext }: ProcessInputArgs) {
    const found = ids(this.memory, requestContext, messageList);
    if (!found) return messageList;
    const query = userQuery(messages);
    if (!query) return messageList;
    try {
      const block = await this.memory.longTermContext(query, found.threadId, found.resourceId);
      if (block) messageList.addSystem(block, "memory");
    } catch (error) {
      this.memory.log("long-term memory context failed; the run goes on without it", error);
    }
    return messageList;
  }
}

/**
 * Observational memory (Mastra's `observationalMemory`): the server's dated observation log of the user
 * (or of this thread), as the first system message. The block is byte-identical from run to run until the
 * log changes, so the model provider's prompt cache keeps it.
 */
export class MongomemObservations implements Processor {
  readonly id = "observational-memory";
  readonly name = "MongomemObservations";

  constructor(private readonly memory: MemoryBackend) {}

  async processInput({ messageList, requestContext }: ProcessInputArgs) {
    const found = ids(this.memory, requestContext, messageList);
    if (!found) return messageList;
    try {
      const block = await this.memory.observationContext(found.threadId, found.resourceId);
      if (block) messageList.addSystem(block, "memory");
    } catch (error) {
      this.memory.log("observational memory failed; the run goes on without it", error);
    }
    return messageList;
  }
}

/** The system message for messages recalled from other threads (the layout of Mastra's SemanticRecall). */
export function rememberedFromOtherThreads(messages: MastraDBMessage[]): { role: "system"; content: string } {
  const sorted = [...messages].sort((a, b) => new Date(a.createdAt).getTime() - new Date(b.createdAt).getTime() || a.id.localeCompare(b.id));
  let text = "";
  let lastDay: string | null = null;
  for (const message of sorted) {
    const at = new Date(message.createdAt);
    const day = `${at.getUTCFullYear()}, ${at.toLocaleString("en-US", { month: "short", timeZone: "UTC" })}, ${at.getUTCDate()}`;
    if (day !== lastDay) text += `\nthe following messages are from ${day}\n`;
    lastDay = day;
    const hours = at.getUTCHours();
    const minutes = at.getUTCMinutes();
    const time = `${hours % 12 || 12}:${minutes < 10 ? "0" : ""}${minutes} ${hours < 12 ? "AM" : "PM"}`;
    const role = message.role.charAt(0).toUpperCase() + message.role.slice(1);
    text += `Message from previous conversation at ${time}: ${role}: ${textOf(message)}\n`;
  }
  return {
    role: "system",
    // inside mongomem's marker: other conversations' words are data, and an echo of them is never learnt again
    content: marked(
      `The following messages were remembered from a different conversation:\n<remembered_from_other_conversation>\n${text}\n<end_remembered_from_other_conversation>`,
      "recall",
    ),
  };
}
