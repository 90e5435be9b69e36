/**
 * mongomem as a Mastra Agent's memory: `new Agent({ memory: new MongomemMemory({ ... }) })`.
 *
 * Built on `MastraMemory` (@mastra/core/memory). Threads and messages are mongomem threads and turns;
 * working memory is mongomem's (its template or schema is the project's, memory.working_memory);
 * semantic recall is POST /v1/recall (no vector store or embedder in the app); long-term memories
 * extracted in the background are given to the agent as context and through a search tool.
 */
import type { MastraDBMessage } from "@mastra/core/agent/message-list";
import {
  MastraMemory,
  removeWorkingMemoryTags,
  type MemoryConfig,
  type MemoryConfigInternal,
  type MessageDeleteInput,
  type StorageThreadType,
  type WorkingMemoryTemplate,
} from "@mastra/core/memory";
import type { InputProcessor, InputProcessorOrWorkflow, OutputProcessor, OutputProcessorOrWorkflow } from "@mastra/core/processors";
import type { RequestContext } from "@mastra/core/request-context";
import type {
  StorageCloneThreadInput,
  StorageCloneThreadOutput,
  StorageListMessagesInput,
  StorageListThreadsInput,
  StorageListThreadsOutput,
} from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";

import { splitTurns } from "../batches.js";
import { MongomemClient, type MongomemClientOptions } from "../client.js";
import { MongomemError } from "../errors.js";
import { marked } from "../markers.js";
import type { Schemas } from "../types.js";
import { messageToTurn, sha256, storedId, textOf, toDate, turnToMessage } from "./messages.js";
import {
  historyLimit,
  MongomemLongTermContext,
  MongomemObservations,
  MongomemMessageHistory,
  MongomemSemanticRecall,
  MongomemWorkingMemory,
  type MemoryBackend,
} from "./processors.js";

export { rememberedFromOtherThreads } from "./processors.js";
export { messageToTurn, turnToMessage } from "./messages.js";

type Thread = Schemas["Thread"];
type TurnOut = Schemas["TurnOut"];
type Scope = "thread" | "resource";

export interface MongomemMemoryOptions {
  /** The client to use; or give `baseUrl` / `apiKey` (default $MONGOMEM_URL, $MONGOMEM_API_KEY). */
  client?: MongomemClient;
  baseUrl?: string;
  apiKey?: string;
  clientOptions?: MongomemClientOptions;
  id?: string;
  name?: string;
  /**
   * Mastra's memory options: `lastMessages`, `messageHistory` ({maxTokens, atMaxRemoveTokens}),
   * `semanticRecall` ({topK, messageRange, scope, threshold}), `workingMemory` ({enabled, scope, agentManaged}),
   * `readOnly`, `generateTitle`, `observationalMemory` (`true` or `{ enabled, scope }`: the server's
   * observation log as the first system message). Anything else, and what cannot be honoured
   * (`useStateSignals`, recall filters, a template or schema: the project's is used; the observer's model
   * and budgets: the server's), is refused here.
   */
  options?: MemoryConfig;
  /** Recorded on the sessions (the API's `agent_id`). */
  agentId?: string;
  /**
   * Long-term memories relevant to each user message as a system message (POST /v1/context with the
   * `memories` source). Default `{ topK: 5, tokenBudget: 1000 }`; `false` turns it off.
   */
  longTermMemory?: false | { topK?: number; tokenBudget?: number };
  /** Give the agent a `searchMemories` tool over its long-term memories (default true). */
  searchTool?: boolean;
}

const MAX_OWNERS = 10_000;
/** The observation block's budget: the server's log is kept within memory.observations.max_tokens. */
const OBSERVATION_BUDGET = 8000;
const PAGE = 100;

/**
 * A Mastra memory whose threads, messages, working memory, semantic recall and long-term memories live in
 * mongomem. Hand it to an Agent as `memory`; every run then records its messages as turns.
 */
export class MongomemMemory extends MastraMemory implements MemoryBackend {
  readonly client: MongomemClient;
  readonly agentId?: string;
  private readonly longTerm: false | { topK: number; tokenBudget: number };
  private readonly searchTool: boolean;
  private readonly observational: false | { scope: Scope };
  /** Which resource (mongomem user) owns a thread: Mastra asks for threads by id alone. */
  private readonly owners = new Map<string, string>();
  private readonly shared = new Set<string>();
  /** Where a saved message is: for deleteMessages (the API deletes a thread's turns from a seq on). */
  private readonly placed = new Map<string, { threadId: string; resourceId: string; seq: number }>();
  private templates = new Map<string, Promise<WorkingMemoryTemplate | null>>();
  private projectScope?: Promise<Scope>;

  constructor(config: MongomemMemoryOptions = {}) {
    const options = config.options ?? {};
    refuseUnsupported(options);
    // Mastra's constructor insists on a vector store for semantic recall; ours is the API's.
    const { semanticRecall: _recall, observationalMemory: _observational, ...rest } = options;
    super({ id: config.id, name: config.name ?? "MongomemMemory", options: rest });
    this.threadConfig = this.getMergedThreadConfig(options as MemoryConfigInternal);
    this.client = config.client ?? new MongomemClient({ ...config.clientOptions, baseUrl: config.baseUrl ?? config.clientOptions?.baseUrl, apiKey: config.apiKey ?? config.clientOptions?.apiKey });
    this.agentId = config.agentId;
    this.longTerm = config.longTermMemory === false ? false : { topK: config.longTermMemory?.topK ?? 5, tokenBudget: config.longTermMemory?.tokenBudget ?? 1000 };
    this.searchTool = config.searchTool ?? true;
    this.observational = observationalOption(options);
  }

  // -- processors: what an Agent runs before and after the model ------------------------------------------

  override async getInputProcessors(configured: InputProcessorOrWorkflow[] = [], context?: RequestContext): Promise<InputProcessor[]> {
    const config = this.config((context?.get("MastraMemory") as { memoryConfig?: MemoryConfigInternal } | undefined)?.memoryConfig);
    const taken = new Set(configured.map((p) => (p as { id?: string }).id));
    const processors: InputProcessor[] = [];
    // first: the observation log opens the prompt (the prefix a provider's prompt cache keeps)
    if (this.observational && !taken.has("observational-memory")) processors.push(new MongomemObservations(this));
    if (this.workingMemoryOn(config) && !taken.has("working-memory")) processors.push(new MongomemWorkingMemory(this));
    if (historyLimit(config) !== false && !taken.has("message-history")) processors.push(new MongomemMessageHistory(this));
    if (config.semanticRecall && !taken.has("semantic-recall")) processors.push(new MongomemSemanticRecall(this));
    if (this.longTerm && !taken.has("mongomem-long-term")) processors.push(new MongomemLongTermContext(this));
    return processors;
  }

  override async getOutputProcessors(configured: OutputProcessorOrWorkflow[] = [], _context?: RequestContext): Promise<OutputProcessor[]> {
    const taken = configured.some((p) => (p as { id?: string }).id === "message-history");
    // Saves the run's messages unless readOnly, or `lastMessages: false` (Mastra: history neither loaded nor saved).
    return taken ? [] : [new MongomemMessageHistory(this)];
  }

  override listTools(config?: MemoryConfig): Record<string, ReturnType<typeof createTool>> {
    const merged = this.config(config as MemoryConfigInternal);
    const tools: Record<string, ReturnType<typeof createTool>> = {};
    const wm = merged.workingMemory as { enabled?: boolean; agentManaged?: boolean } | undefined;
    if (this.workingMemoryOn(merged) && wm?.agentManaged !== false && !merged.readOnly) {
      tools.updateWorkingMemory = createTool({
        id: "update-working-memory",
        description:
          "Update the working memory with new information. In template (Markdown) mode send the whole document as text: " +
          "it replaces what is stored. In schema (JSON) mode send only the fields that changed, as an object: " +
          "they are merged into what is stored, null deletes a field.",
        inputSchema: z.object({
          memory: z.union([z.string(), z.record(z.string(), z.unknown())]).describe("The Markdown document (template mode), or the changed fields as an object (schema mode)"),
        }),
        execute: async (input, context) => {
          const threadId = context?.agent?.threadId;
          const resourceId = context?.agent?.resourceId;
          if (!resourceId) throw new Error("updateWorkingMemory needs the run's resourceId");
          const scope = await this.scopeOf(merged);
          if (scope === "thread" && !threadId) throw new Error("thread-scoped working memory needs the run's threadId");
          const format = (await this.getWorkingMemoryTemplate({ memoryConfig: config as MemoryConfigInternal | undefined }))?.format ?? "markdown";
          const memory = toolMemory(input.memory, format);
          // The API does what the tool means: merge in schema mode, replace in template mode.
          await this.client.applyWorkingMemoryTool({ memory }, this.wmQuery(scope, resourceId, threadId));
          return { success: true };
        },
      });
    }
    if (this.searchTool) {
      tools.searchMemories = createTool({
        id: "search-memories",
        description: "Search what is known about the user from earlier conversations (facts, preferences, events, procedures).",
        inputSchema: z.object({
          query: z.string().describe("What to look for"),
          topK: z.number().int().min(1).max(20).optional().describe("How many memories (default 5)"),
        }),
        execute: async (input, context) => {
          const resourceId = context?.agent?.resourceId;
          if (!resourceId) throw new Error("searchMemories needs the run's resourceId");
          const found = await this.client.searchMemories({ user_id: resourceId, query: input.query, top_k: input.topK ?? 5, ...(this.agentId ? { agent_id: this.agentId } : {}) });
          return { memories: found.results.map((r) => ({ id: r.memory_id, type: r.type, text: r.text, score: r.score })) };
        },
        // the model reads the memories inside the marker: anyone's stored words, never instructions
        toModelOutput: (output: unknown) => ({ type: "text" as const, value: marked(JSON.stringify(output, null, 2), "search") }),
      });
    }
    return tools;
  }

  // -- threads --------------------------------------------------------------------------------------------------

  override async getThreadById({ threadId, resourceId }: { threadId: string; resourceId?: string }): Promise<StorageThreadType | null> {
    const owner = resourceId ?? this.owners.get(threadId);
    // Unknown owner: null, and the Agent then creates the thread with its resourceId, which finds it (saveThread).
    if (!owner) return null;
    try {
      return this.threadOut(await this.client.getThread(threadId, { user_id: owner }));
    } catch (error) {
      if (error instanceof MongomemError && error.status === 404) return null;
      throw error;
    }
  }

  override async listThreads(args: StorageListThreadsInput): Promise<StorageListThreadsOutput> {
    const resourceId = args.filter?.resourceId;
    if (!resourceId) throw new Error("MongomemMemory.listThreads needs filter.resourceId: mongomem threads belong to a user");
    const all: StorageThreadType[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await this.client.listThreads({ user_id: resourceId, limit: PAGE, cursor: cursor ?? undefined });
      all.push(...page.threads.map((t) => this.threadOut(t)));
      cursor = page.next_cursor;
    } while (cursor);
    const wanted = Object.entries(args.filter?.metadata ?? {});
    const matching = all.filter((t) => wanted.every(([k, v]) => JSON.stringify(t.metadata?.[k]) === JSON.stringify(v)));
    const field = args.orderBy?.field ?? "createdAt";
    const sign = (args.orderBy?.direction ?? "DESC") === "ASC" ? 1 : -1;
    matching.sort((a, b) => sign * (a[field].getTime() - b[field].getTime()));
    const perPage = args.perPage ?? 100;
    const page = args.page ?? 0;
    const threads = perPage === false ? matching : matching.slice(page * perPage, (page + 1) * perPage);
    const hasMore = perPage !== false && (page + 1) * perPage < matching.length;
    return { threads, total: matching.length, page: perPage === false ? 0 : page, perPage, hasMore };
  }

  /** Create the thread, or update it when it exists; `metadata.workingMemory` seeds working memory. */
  override async saveThread({ thread, memoryConfig }: { thread: StorageThreadType; memoryConfig?: MemoryConfigInternal }): Promise<StorageThreadType> {
    const { workingMemory, ...metadata } = thread.metadata ?? {};
    const resourceId = thread.resourceId;
    this.remember(thread.id, resourceId);
    let saved: Thread;
    try {
      saved = await this.client.createThread({ thread_id: thread.id, user_id: resourceId, ...(thread.title ? { title: thread.title } : {}), metadata });
    } catch (error) {
      if (!(error instanceof MongomemError && error.status === 409)) throw error;
      const existing = await this.client.getThread(thread.id, { user_id: resourceId });
      const { workingMemory: _kept, ...existingMetadata } = existing.metadata ?? {};
      const retitled = thread.title && thread.title !== existing.title;
      const remetadata = Object.keys(metadata).length > 0 && JSON.stringify(metadata) !== JSON.stringify(existingMetadata);
      saved = retitled || remetadata
        ? await this.client.updateThread(thread.id, { ...(retitled ? { title: thread.title } : {}), ...(remetadata ? { metadata } : {}) }, { user_id: resourceId })
        : existing;
    }
    if (typeof workingMemory === "string" && this.workingMemoryOn(this.config(memoryConfig))) {
      await this.updateWorkingMemory({ threadId: thread.id, resourceId, workingMemory, memoryConfig });
      saved = await this.client.getThread(thread.id, { user_id: resourceId });
    }
    return this.threadOut(saved);
  }

  override async updateThread({ id, title, metadata, memoryConfig, resourceId }: { id: string; title?: string; metadata?: Record<string, unknown>; memoryConfig?: MemoryConfigInternal; resourceId?: string }): Promise<StorageThreadType> {
    const owner = this.ownerOf(id, resourceId);
    const { workingMemory, ...rest } = metadata ?? {};
    let saved = await this.client.updateThread(id, { ...(title !== undefined ? { title } : {}), ...(metadata !== undefined ? { metadata: rest } : {}) }, { user_id: owner });
    if (typeof workingMemory === "string" && this.workingMemoryOn(this.config(memoryConfig))) {
      await this.updateWorkingMemory({ threadId: id, resourceId: owner, workingMemory, memoryConfig });
      saved = await this.client.getThread(id, { user_id: owner });
    }
    return this.threadOut(saved);
  }

  /** Delete the thread with its messages, recall entries and thread working memory (memories stay). */
  override async deleteThread(threadId: string, resourceId?: string): Promise<void> {
    await this.client.deleteThread(threadId, { user_id: this.ownerOf(threadId, resourceId) });
    this.owners.delete(threadId);
  }

  override async cloneThread(args: StorageCloneThreadInput): Promise<StorageCloneThreadOutput> {
    const owner = this.ownerOf(args.sourceThreadId);
    if (args.resourceId && args.resourceId !== owner) {
      throw new Error("MongomemMemory.cloneThread: a thread is cloned within its user (resourceId must stay the same)");
    }
    if (args.options?.messageLimit !== undefined || args.options?.messageFilter !== undefined) {
      throw new Error("MongomemMemory.cloneThread copies every message: messageLimit and messageFilter are not supported");
    }
    const cloned = await this.client.cloneThread(
      args.sourceThreadId,
      { ...(args.newThreadId ? { new_thread_id: args.newThreadId } : {}), ...(args.title ? { title: args.title } : {}), ...(args.metadata ? { metadata: args.metadata } : {}) },
      { user_id: owner },
    );
    const thread = this.threadOut(cloned.thread);
    this.remember(thread.id, owner);
    const clonedMessages = await this.threadMessages(thread.id, owner);
    const messageIdMap = Object.fromEntries(clonedMessages.map((m) => [m.id.replace(/@[^@]*$/, ""), m.id]));
    return { thread, clonedMessages, messageIdMap };
  }

  // -- messages ---------------------------------------------------------------------------------------------------

  override async saveMessages({ messages }: { messages: MastraDBMessage[]; memoryConfig?: MemoryConfig }): Promise<{ messages: MastraDBMessage[] }> {
    const byThread = new Map<string, MastraDBMessage[]>();
    for (const message of messages) {
      if (!message.threadId) throw new Error(`message ${message.id} has no threadId`);
      byThread.set(message.threadId, [...(byThread.get(message.threadId) ?? []), message]);
    }
    for (const [threadId, list] of byThread) {
      await this.persist(list, threadId, this.ownerOf(threadId, list.find((m) => m.resourceId)?.resourceId));
    }
    return { messages };
  }

  /**
   * The thread's messages (newest `perPage`, in time order), plus, with `vectorSearchString` and semantic
   * recall on, the recalled messages and their neighbours, as Mastra's Memory.recall.
   */
  override async recall(args: StorageListMessagesInput & { threadConfig?: MemoryConfigInternal; vectorSearchString?: string }) {
    const threadIds = Array.isArray(args.threadId) ? args.threadId : [args.threadId];
    const config = this.config(args.threadConfig);
    const limit = historyLimit(config);
    const perPage = args.perPage ?? (limit === false ? 0 : limit);
    const page = args.page ?? 0;
    const newestFirst = !args.orderBy || args.orderBy.direction === "DESC";
    let all: MastraDBMessage[] = [];
    for (const threadId of threadIds) {
      all.push(...(await this.threadMessages(threadId, this.ownerOf(threadId, args.resourceId))));
    }
    const range = args.filter?.dateRange;
    if (range) {
      all = all.filter((m) => {
        const t = toDate(m.createdAt).getTime();
        const start = range.start?.getTime();
        const end = range.end?.getTime();
        if (start !== undefined && (range.startExclusive ? t <= start : t < start)) return false;
        if (end !== undefined && (range.endExclusive ? t >= end : t > end)) return false;
        return true;
      });
    }
    all.sort((a, b) => toDate(a.createdAt).getTime() - toDate(b.createdAt).getTime());
    const total = all.length;
    let window: MastraDBMessage[];
    if (perPage === false) window = all;
    else if (newestFirst) window = all.slice(Math.max(0, total - (page + 1) * perPage), Math.max(0, total - page * perPage));
    else window = all.slice(page * perPage, (page + 1) * perPage);
    const hasMore = perPage !== false && (page + 1) * perPage < total;
    if (args.vectorSearchString && config.semanticRecall && threadIds.length === 1) {
      const threadId = threadIds[0]!;
      const present = new Set(window.map((m) => m.id));
      const recalled = await this.semanticMatches(args.vectorSearchString, threadId, this.ownerOf(threadId, args.resourceId), config, [...present]);
      window = [...window, ...recalled.filter((m) => !present.has(m.id))].sort((a, b) => toDate(a.createdAt).getTime() - toDate(b.createdAt).getTime());
    }
    return { messages: window, total, page, perPage, hasMore };
  }

  /**
   * Delete messages. The API deletes a thread's turns from a point on, so the messages must be the newest of
   * their thread (those saved or read by this instance); anything else is refused before deleting.
   */
  override async deleteMessages(input: MessageDeleteInput): Promise<void> {
    const wanted = input.map((item) => (typeof item === "string" ? item : item.id));
    const byThread = new Map<string, { resourceId: string; seqs: number[] }>();
    for (const id of wanted) {
      const place = this.placed.get(id);
      if (!place) throw new Error(`MongomemMemory.deleteMessages: message ${id} was not saved or read by this memory`);
      const entry = byThread.get(place.threadId) ?? { resourceId: place.resourceId, seqs: [] };
      entry.seqs.push(place.seq);
      byThread.set(place.threadId, entry);
    }
    for (const [threadId, { resourceId, seqs }] of byThread) {
      const from = Math.min(...seqs);
      const newer = (await this.client.listTurns(threadId, { user_id: resourceId, limit: 200 })).turns.filter((t) => t.seq >= from);
      if (newer.some((t) => !seqs.includes(t.seq))) {
        throw new Error("MongomemMemory.deleteMessages deletes a thread's newest messages only (turns are deleted from a seq on)");
      }
    }
    for (const [threadId, { resourceId, seqs }] of byThread) {
      await this.client.deleteTurns(threadId, { user_id: resourceId, from_seq: Math.min(...seqs) });
    }
    for (const id of wanted) this.placed.delete(id);
  }

  // -- working memory -----------------------------------------------------------------------------------------

  override async getWorkingMemory({ threadId, resourceId, memoryConfig }: { threadId: string; resourceId?: string; memoryConfig?: MemoryConfigInternal }): Promise<string | null> {
    const config = this.config(memoryConfig);
    if (!this.workingMemoryOn(config)) return null;
    const scope = await this.scopeOf(config);
    const owner = this.ownerOf(threadId, resourceId);
    const state = await this.client.getWorkingMemory(this.wmQuery(scope, owner, threadId));
    if (!("version" in state) || state.version === 0) return null;
    if (state.mode === "schema") return state.data == null ? null : JSON.stringify(state.data);
    return state.content ?? null;
  }

  override async getWorkingMemoryTemplate({ memoryConfig }: { memoryConfig?: MemoryConfigInternal } = {}): Promise<WorkingMemoryTemplate | null> {
    const config = this.config(memoryConfig);
    if (!this.workingMemoryOn(config)) return null;
    const key = await this.scopeOf(config);
    let template = this.templates.get(key);
    if (!template) {
      // The project's template or schema, as the API shows it to agents (any user: it is the same for all).
      template = this.client.getWorkingMemoryTool({ scope: key, user_id: "mastra-template", ...(key === "thread" ? { thread_id: "mastra-template" } : {}) }).then((ctx) => {
        if (!("mode" in ctx)) return null;
        if (ctx.mode === "schema") {
          const schema = (ctx.tool?.input_schema as { properties?: { memory?: unknown } } | undefined)?.properties?.memory;
          return { format: "json", content: JSON.stringify(schema ?? {}) } as WorkingMemoryTemplate;
        }
        const match = /<working_memory_template>\n?([\s\S]*?)\n?<\/working_memory_template>/.exec(ctx.instructions);
        return match ? ({ format: "markdown", content: match[1]!.trim() } as WorkingMemoryTemplate) : null;
      });
      template.catch(() => this.templates.delete(key));
      this.templates.set(key, template);
    }
    return template;
  }

  /** Replace the working memory (Markdown text, or the JSON text of the data in schema mode). */
  override async updateWorkingMemory({ threadId, resourceId, workingMemory, memoryConfig }: { threadId: string; resourceId?: string; workingMemory: string; memoryConfig?: MemoryConfigInternal }): Promise<void> {
    const config = this.config(memoryConfig);
    if (!this.workingMemoryOn(config)) throw new Error("Working memory is not enabled for this memory instance");
    const scope = await this.scopeOf(config);
    const owner = this.ownerOf(threadId, resourceId);
    await this.client.replaceWorkingMemory({ memory: workingMemory }, this.wmQuery(scope, owner, threadId));
  }

  override async __experimental_updateWorkingMemoryVNext(args: { threadId: string; resourceId?: string; workingMemory: string; searchString?: string; memoryConfig?: MemoryConfigInternal }): Promise<{ success: boolean; reason: string }> {
    try {
      const current = (await this.getWorkingMemory(args)) ?? "";
      let next = args.workingMemory;
      if (args.searchString && current.includes(args.searchString)) next = current.replace(args.searchString, args.workingMemory);
      else if (current && current.includes(args.workingMemory)) return { success: false, reason: "attempted to insert duplicate data into working memory. this entry was skipped" };
      else if (current) next = `${current}\n${args.workingMemory}`;
      await this.updateWorkingMemory({ ...args, workingMemory: next });
      return { success: true, reason: "working memory updated" };
    } catch (error) {
      return { success: false, reason: error instanceof Error ? error.message : String(error) };
    }
  }

  // -- MemoryBackend: what the processors call ---------------------------------------------------------------

  config(runtime?: MemoryConfigInternal): MemoryConfigInternal {
    if (!runtime) return this.threadConfig;
    refuseUnsupported(runtime as MemoryConfig, false);
    return this.getMergedThreadConfig(runtime);
  }

  async historyMessages(threadId: string, resourceId: string, limit: number): Promise<MastraDBMessage[]> {
    this.remember(threadId, resourceId);
    try {
      const page = await this.client.listTurns(threadId, { user_id: resourceId, limit: Math.min(limit, 200) });
      return this.messagesOf(page.turns, resourceId, threadId);
    } catch (error) {
      if (error instanceof MongomemError && error.status === 404) return []; // no turns yet
      throw error;
    }
  }

  async persist(messages: MastraDBMessage[], threadId: string, resourceId: string): Promise<void> {
    this.remember(threadId, resourceId);
    const kept = messages.flatMap((m) => {
      const cleaned = forPersistence(m);
      return cleaned ? [{ ...cleaned, threadId, resourceId }] : [];
    });
    if (kept.length === 0) return;
    const stored = await this.storedIds(threadId, resourceId, kept.length + 50);
    const fresh = kept.filter((m) => !stored.has(m.id));
    const turns = fresh.flatMap((m) => {
      const turn = messageToTurn(m);
      return turn ? [{ message: m, turn }] : [];
    });
    if (turns.length === 0) return;
    // One token per batch of message ids: a retried or repeated save is replayed, never recorded twice.
    const token = `mastra-${(await sha256(`${threadId}\n${turns.map((t) => t.message.id).join("\n")}`)).slice(0, 48)}`;
    // batches of at most 100 turns (the API's max_batch); a content over 1 MiB is recorded cut, and logged
    const { batches, truncated } = splitTurns(turns.map((t) => t.turn));
    if (truncated.length) this.log(`recorded ${truncated.length} message(s) cut to the API's content limit`, new Error(truncated.map((t) => `${turns[t.index]!.message.id}: ${t.droppedBytes} of ${t.bytes} bytes`).join("; ")));
    let at = 0;
    for (const [i, batch] of batches.entries()) {
      const recorded = await this.client.recordTurns(threadId, {
        user_id: resourceId,
        ...(this.agentId ? { agent_id: this.agentId } : {}),
        client_token: i === 0 ? token : `${token}-${i}`,
        turns: batch,
      });
      recorded.turns.forEach((t, j) => this.placed.set(turns[at + j]!.message.id, { threadId, resourceId, seq: t.seq }));
      at += batch.length;
    }
  }

  async workingMemoryInstructions(threadId: string, resourceId: string, config: MemoryConfigInternal): Promise<string | null> {
    const scope = await this.scopeOf(config);
    const wm = config.workingMemory as { agentManaged?: boolean } | undefined;
    const readOnly = Boolean(config.readOnly) || wm?.agentManaged === false;
    const ctx = await this.client.getWorkingMemoryTool({ ...this.wmQuery(scope, resourceId, threadId), ...(readOnly ? { readOnly: true } : {}) });
    return "instructions" in ctx ? ctx.instructions : null;
  }

  async semanticMatches(query: string, threadId: string, resourceId: string, config: MemoryConfigInternal, excludeIds: string[]): Promise<MastraDBMessage[]> {
    const recall = typeof config.semanticRecall === "object" ? config.semanticRecall : { topK: 4, messageRange: 1 };
    const limit = historyLimit(config);
    const answer = await this.client.recall({
      query: query.slice(0, 2000),
      user_id: resourceId,
      thread: threadId,
      scope: recall.scope ?? "resource",
      top_k: Math.min(Math.max(recall.topK ?? 4, 1), 100),
      message_range: recall.messageRange ?? 1,
      ...(recall.threshold !== undefined ? { min_score: recall.threshold } : {}),
      // what the history already holds is neither a match nor a neighbour
      ...(limit !== false && limit > 0 ? { exclude_recent: limit } : {}),
    });
    const skip = new Set(excludeIds);
    return answer.threads.flatMap((group) =>
      group.turns.flatMap((turn) => {
        const message = turnToMessage(turn, resourceId, group.thread);
        return message && !skip.has(message.id) ? [message] : [];
      }),
    );
  }

  async longTermContext(query: string, threadId: string, resourceId: string): Promise<string | null> {
    if (!this.longTerm) return null;
    const answer = await this.client.buildContext({
      user_id: resourceId,
      session_id: threadId,
      query: query.slice(0, 2000),
      token_budget: Math.max(256, this.longTerm.tokenBudget),
      sources: [{ source: "memories", top_k: this.longTerm.topK }],
      ...(this.agentId ? { agent_id: this.agentId } : {}),
    });
    const found = answer.sections.some((s) => s.ids.length > 0);
    return found ? answer.context : null;
  }

  async observationContext(threadId: string, resourceId: string): Promise<string | null> {
    if (!this.observational) return null;
    const answer = await this.client.buildContext({
      user_id: resourceId,
      session_id: threadId,
      token_budget: OBSERVATION_BUDGET,
      sources: [{ source: "observations", scope: this.observational.scope }],
    });
    const found = answer.sections.some((s) => s.name === "observations" && s.ids.length > 0);
    return found ? answer.context : null;
  }

  log(message: string, error: unknown): void {
    this.logger?.warn?.(`[MongomemMemory] ${message}`, { error: error instanceof Error ? error.message : String(error) });
  }

  // -- helpers ---------------------------------------------------------------------------------------------

  private async threadMessages(threadId: string, resourceId: string): Promise<MastraDBMessage[]> {
    const turns: TurnOut[] = [];
    let before: number | null | undefined;
    try {
      do {
        const page = await this.client.listTurns(threadId, { user_id: resourceId, limit: 200, ...(before ? { before_seq: before } : {}) });
        turns.unshift(...page.turns);
        before = page.next_before_seq;
      } while (before);
    } catch (error) {
      if (!(error instanceof MongomemError && error.status === 404)) throw error;
      // no turns: an empty thread has no messages; a thread that does not exist is an error, as in Mastra
      if ((await this.getThreadById({ threadId, resourceId })) === null) throw new Error(`No thread found with id ${threadId}`);
      return [];
    }
    return this.messagesOf(turns, resourceId, threadId);
  }

  private messagesOf(turns: TurnOut[], resourceId: string, threadId: string): MastraDBMessage[] {
    return turns.flatMap((turn) => {
      const message = turnToMessage(turn, resourceId, threadId);
      if (!message) return [];
      this.placed.set(message.id, { threadId, resourceId, seq: turn.seq });
      return [message];
    });
  }

  private async storedIds(threadId: string, resourceId: string, window: number): Promise<Set<string>> {
    try {
      const page = await this.client.listTurns(threadId, { user_id: resourceId, limit: Math.min(window, 200) });
      return new Set(page.turns.map(storedId));
    } catch (error) {
      if (error instanceof MongomemError && error.status === 404) return new Set();
      throw error;
    }
  }

  private workingMemoryOn(config: MemoryConfigInternal): boolean {
    const wm = config.workingMemory as { enabled?: boolean } | undefined;
    return Boolean(wm?.enabled);
  }

  /** The working-memory scope: the Mastra option, else the project's (memory.working_memory.scope), as the AI SDK tools do. */
  private async scopeOf(config: MemoryConfigInternal): Promise<Scope> {
    const configured = (config.workingMemory as { scope?: Scope } | undefined)?.scope;
    if (configured) return configured;
    if (!this.projectScope) {
      const probe = "mastra-scope-probe";
      this.projectScope = this.client.getWorkingMemory({ user_id: probe, thread_id: probe }).then((state) => ("scope" in state && state.scope === "thread" ? "thread" : "resource"));
      this.projectScope.catch(() => (this.projectScope = undefined));
    }
    return this.projectScope;
  }

  private wmQuery(scope: Scope, resourceId: string, threadId?: string) {
    return { scope, user_id: resourceId, ...(scope === "thread" && threadId ? { thread_id: threadId } : {}), ...(scope === "resource" && this.agentId ? { agent_id: this.agentId } : {}) };
  }

  // mongomem keeps threads per user: an id two users' threads share is never resolved to either of them
  // without a resourceId (issue 33's 28th probe: alice's retitle landed in bob's thread of her thread's id)
  private remember(threadId: string, resourceId: string | undefined): void {
    if (!resourceId || this.shared.has(threadId)) return;
    const known = this.owners.get(threadId);
    if (known !== undefined && known !== resourceId) {
      this.owners.delete(threadId);
      if (this.shared.size >= MAX_OWNERS) this.shared.delete(this.shared.values().next().value!);
      this.shared.add(threadId);
      return;
    }
    if (this.owners.size >= MAX_OWNERS && !this.owners.has(threadId)) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(threadId, resourceId);
  }

  private ownerOf(threadId: string, resourceId?: string): string {
    const owner = resourceId ?? this.owners.get(threadId);
    if (!owner) {
      const why = this.shared.has(threadId) ? `two users have a thread ${threadId}: which one?` : `which user owns thread ${threadId}?`;
      throw new Error(`MongomemMemory: ${why} Pass resourceId (mongomem threads belong to a user)`);
    }
    this.remember(threadId, owner);
    return owner;
  }

  private threadOut(thread: Thread): StorageThreadType {
    this.remember(thread.thread_id, thread.user_id);
    return {
      id: thread.thread_id,
      title: thread.title ?? "",
      resourceId: thread.user_id,
      createdAt: new Date(thread.created_at),
      updatedAt: new Date(thread.updated_at),
      // Mastra keeps a thread's schema-mode working memory in metadata as its JSON text
      metadata: jsonWorkingMemory(thread.metadata ?? {}),
    };
  }
}

/** What Mastra never stores: system messages, transient signals, partial tool calls, working-memory tool calls and tags. */
function forPersistence(message: MastraDBMessage): MastraDBMessage | null {
  if (message.role === "system") return null;
  const signal = (message.content?.metadata as { signal?: { transient?: boolean } } | undefined)?.signal;
  if (message.role === "signal" && signal?.transient === true) return null;
  const content = { ...message.content };
  if (typeof content.content === "string" && content.content) content.content = removeWorkingMemoryTags(content.content).trim();
  content.parts = (content.parts ?? []).flatMap((part): MastraDBMessage["content"]["parts"] => {
    if (part.type === "tool-invocation") {
      if (part.toolInvocation.state === "partial-call") return [];
      if (part.toolInvocation.toolName === "updateWorkingMemory") return [];
    }
    if (part.type === "text") {
      const cleaned = removeWorkingMemoryTags(part.text);
      return [cleaned === part.text ? part : { ...part, text: cleaned.trim() }];
    }
    return [part];
  });
  if (content.parts.length === 0 && !(typeof content.content === "string" && content.content.trim())) return null;
  if (!textOf({ ...message, content }) && content.parts.every((p) => p.type === "step-start")) return null;
  return { ...message, content };
}

/** The options of Mastra's MemoryConfig this class honours; any other is refused at construction. */
const HONOURED = new Set(["readOnly", "lastMessages", "messageHistory", "semanticRecall", "workingMemory", "generateTitle", "observationalMemory", "filterIncompleteToolCalls", "retainFullInput"]);

/**
 * Refuse, with the reason, every Mastra memory option this class cannot honour: never accept one and ignore it.
 * (Mastra's own defaults, such as `observationalMemory: false`, are accepted.)
 */
export function refuseUnsupported(options: MemoryConfig, construction = true): void {
  const refuse = (what: string, why: string) => {
    throw new Error(`MongomemMemory does not support ${what}: ${why}`);
  };
  for (const key of construction ? Object.keys(options) : []) {
    if (!HONOURED.has(key) && (options as Record<string, unknown>)[key] !== undefined) {
      refuse(`the memory option \`${key}\``, "remove it (every option this class takes is in docs/integrations.md)");
    }
  }
  const wm = options.workingMemory as { template?: unknown; schema?: unknown; useStateSignals?: unknown; version?: unknown } | undefined;
  // (a merged run config carries Mastra's default template: only the options given are checked for it)
  if (construction && wm && (wm.template !== undefined || wm.schema !== undefined)) {
    throw new Error(
      "MongomemMemory: the working-memory template or schema is the project's (project-config.yaml, " +
        "memory.working_memory.template or .schema), shared by every client; remove it from the Mastra options " +
        "and keep `workingMemory: { enabled, scope }`.",
    );
  }
  if (wm?.useStateSignals) refuse("workingMemory.useStateSignals", "working memory is given to the model in the system message (the API renders it); remove the option");
  const recall = options.semanticRecall;
  if (recall && typeof recall === "object") {
    const r = recall as { filter?: unknown; indexConfig?: unknown; indexName?: unknown };
    if (r.filter !== undefined) refuse("semanticRecall.filter", "recall searches the user's messages (scope `thread` or `resource`) through POST /v1/recall, which takes no metadata filter");
    if (r.indexConfig !== undefined) refuse("semanticRecall.indexConfig", "the recall index is the server's (memory.recall in project-config.yaml), not the app's vector store");
    if (r.indexName !== undefined) refuse("semanticRecall.indexName", "the recall index is the server's, not the app's vector store");
  }
  const om = options.observationalMemory as unknown;
  // (checked at construction only: the constructor's options decide observational memory)
  if (construction && om && typeof om === "object") {
    for (const key of Object.keys(om)) {
      if (!["enabled", "scope"].includes(key) && (om as Record<string, unknown>)[key] !== undefined) {
        refuse(`observationalMemory.${key}`, "the observer, the reflector, their model and budgets are the server's (memory.observations in project-config.yaml); keep `{ enabled, scope }`");
      }
    }
    const scope = (om as { scope?: unknown }).scope;
    if (scope !== undefined && scope !== "thread" && scope !== "resource") refuse(`observationalMemory.scope ${JSON.stringify(scope)}`, "use 'thread' or 'resource'");
  } else if (construction && om !== undefined && typeof om !== "boolean") {
    refuse("observationalMemory", "give true, false or `{ enabled, scope }`");
  }
  if (options.retainFullInput === true) refuse("retainFullInput: true", "the history is loaded before the run's new messages, as by default");
  if (options.filterIncompleteToolCalls === false) refuse("filterIncompleteToolCalls: false", "suspended tool calls are not stored as turns");
  const history = options.messageHistory as { maxTokens?: unknown; atMaxRemoveTokens?: unknown } | undefined;
  if (history !== undefined && !(typeof history.maxTokens === "number" && history.maxTokens > 0)) {
    refuse("messageHistory without a positive maxTokens", "give `messageHistory: { maxTokens }`");
  }
}

/** `observationalMemory` as this class honours it: off, or on with its scope (Mastra's default: thread). */
export function observationalOption(options: MemoryConfig): false | { scope: Scope } {
  const om = options.observationalMemory as boolean | { enabled?: boolean; scope?: Scope } | undefined;
  if (!om) return false;
  if (om === true) return { scope: "thread" };
  return om.enabled === false ? false : { scope: om.scope ?? "thread" };
}

/**
 * What the updateWorkingMemory tool sends, as Mastra's tool takes it: in schema mode an object, in template
 * mode the Markdown text. A JSON object sent in template mode is refused, never stored in
 * place of the Markdown document.
 */
export function toolMemory(memory: string | Record<string, unknown>, format: "json" | "markdown"): string | Record<string, unknown> {
  if (format === "json") {
    // as Mastra's tool: the changed fields as an object; text (even JSON text) is refused
    if (typeof memory === "string") throw new Error("The working memory is JSON (schema mode): send the changed fields as an object, e.g. {\"city\": \"Porto\"}, not text");
    return memory;
  }
  if (typeof memory !== "string" || looksLikeJsonObject(memory)) {
    throw new Error("The working memory is a Markdown document (template mode): send the whole document as text, following the template, not JSON");
  }
  return memory;
}

export function looksLikeJsonObject(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) return false;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return Boolean(parsed) && typeof parsed === "object" && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

function jsonWorkingMemory(metadata: Record<string, unknown>): Record<string, unknown> {
  const wm = metadata.workingMemory;
  return wm && typeof wm === "object" ? { ...metadata, workingMemory: JSON.stringify(wm) } : metadata;
}
