/**
 * mongomem for the Vercel AI SDK: memory tools (`tool()` with zod schemas) and a helper that records a
 * generateText / streamText exchange as turns.
 *
 *   const tools = memoryTools({ client, userId: "ana", sessionId: "chat-1" });
 *   const result = await generateText({ model, tools, prompt });
 *   await recordExchange(client, { userId: "ana", sessionId: "chat-1", prompt, result });
 */
import { tool, type ModelMessage, type Tool } from "ai";
import { z } from "zod";

import { splitTurns, type BatchLimits, type TruncatedTurn } from "../batches.js";
import { marked } from "../markers.js";
import { MongomemClient } from "../client.js";
import type { Schemas } from "../types.js";

type TurnIn = Schemas["TurnIn"];

export interface MemoryToolsOptions {
  client: MongomemClient;
  /** The memory user: memories, working memory and recall are theirs. */
  userId: string;
  /** The conversation (session / thread) the tools record to and read from. */
  sessionId: string;
  /** Recorded on the session; one agent's working memory of the user (resource scope). */
  agentId?: string;
  /** Working-memory scope (default: the project's, memory.working_memory.scope). */
  workingMemoryScope?: "resource" | "thread";
}

/** What the model reads of a tool's result: the result's JSON inside the marker (the app keeps the object). */
function markedForModel(source: string) {
  return ({ output }: { output: unknown }) => ({ type: "text" as const, value: marked(JSON.stringify(output, null, 2), source) });
}

export { marked };

// `.` and `..` alone are refused: URL clients drop such path segments (dot-segments).
const ID = /^(?!\.{1,2}$)[A-Za-z0-9._:@-]{1,128}$/;

/**
 * The memory tools, named as the MCP server's and the Atlas Agent Engine's (camelCase here):
 * searchMemories, buildContext, recallMessages, recordTurn, getWorkingMemory, updateWorkingMemory.
 */
export interface MemoryTools {
  searchMemories: Tool<{ query: string; topK?: number; types?: string[] }, { id: string; type: string; text: string; score: number }[]>;
  buildContext: Tool<{ query?: string; tokenBudget?: number }, { context: string; tokens: number }>;
  recallMessages: Tool<{ query: string; topK?: number; scope?: "resource" | "thread" }, { thread: string; role: "user" | "assistant" | "system" | "tool"; content: string; timestamp: string; matched: boolean }[]>;
  recordTurn: Tool<{ role: "user" | "assistant"; content: string }, { recorded: string[] }>;
  getWorkingMemory: Tool<Record<string, never>, { mode: "template" | "schema"; content: string | null; data: Record<string, unknown> | null; version: number }>;
  updateWorkingMemory: Tool<{ memory: string | Record<string, unknown> }, { version: number; mode: string }>;
  [name: string]: Tool<any, any>;
}

export function memoryTools(options: MemoryToolsOptions): MemoryTools {
  const { client, userId, sessionId, agentId } = options;
  const wm = {
    user_id: userId,
    ...(options.workingMemoryScope ? { scope: options.workingMemoryScope } : {}),
    thread_id: sessionId,
  };
  const agent = agentId ? { agent_id: agentId } : {};
  let mode: Promise<string> | undefined;
  return {
    searchMemories: tool({
      description: "Search what is known about the user from earlier conversations: facts, preferences, events, procedures.",
      inputSchema: z.object({
        query: z.string().min(1).describe("What to look for"),
        topK: z.number().int().min(1).max(20).optional().describe("How many memories (default 5)"),
        types: z.array(z.string()).optional().describe("Only these kinds (semantic, preference, episodic, ...)"),
      }),
      execute: async ({ query, topK, types }) => {
        const found = await client.searchMemories({ user_id: userId, query, top_k: topK ?? 5, ...(types ? { types } : {}), ...(agentId ? { agent_id: agentId } : {}) });
        return found.results.map((r) => ({ id: r.memory_id, type: r.type, text: r.text, score: r.score }));
      },
      toModelOutput: markedForModel("search"),
    }),
    buildContext: tool({
      description: "Everything known that helps answer the next message: working memory, relevant memories, earlier messages.",
      inputSchema: z.object({
        query: z.string().min(1).optional().describe("What the next answer is about (default: the latest user message)"),
        tokenBudget: z.number().int().min(256).max(32000).optional().describe("Size of the block in tokens (default 2000)"),
      }),
      execute: async ({ query, tokenBudget }) => {
        const context = await client.buildContext({ user_id: userId, session_id: sessionId, ...(query ? { query } : {}), token_budget: tokenBudget ?? 2000, ...(agentId ? { agent_id: agentId } : {}) });
        return { context: context.context, tokens: context.tokens };
      },
      // the block itself (marked by the server), not a JSON string around it
      toModelOutput: ({ output }: { output: { context: string } }) => ({ type: "text" as const, value: output.context || "(nothing to add: no memory matches yet)" }),
    }),
    recallMessages: tool({
      description: "Find earlier messages of the conversations with this user by meaning, with the messages around each.",
      inputSchema: z.object({
        query: z.string().min(1).max(2000),
        topK: z.number().int().min(1).max(20).optional(),
        scope: z.enum(["resource", "thread"]).optional().describe("resource: all conversations (default); thread: this one"),
      }),
      execute: async ({ query, topK, scope }) => {
        const recalled = await client.recall({ query, user_id: userId, thread: sessionId, top_k: topK ?? 4, scope: scope ?? "resource", order: "time" });
        return (recalled.messages ?? []).map((t) => ({ thread: t.thread, role: t.role, content: t.content, timestamp: t.timestamp, matched: t.matched }));
      },
      toModelOutput: markedForModel("recall"),
    }),
    recordTurn: tool({
      description: "Record a message in the conversation's memory (what was said, for later extraction and recall).",
      inputSchema: z.object({
        role: z.enum(["user", "assistant"]),
        content: z.string().min(1),
      }),
      execute: async ({ role, content }) => {
        const recorded = await client.recordTurns(sessionId, { user_id: userId, ...(agentId ? { agent_id: agentId } : {}), turns: [{ role, content, metadata: { source: "ai-sdk" } }] });
        return { recorded: recorded.turns.map((t) => t.turn_id) };
      },
    }),
    getWorkingMemory: tool({
      description: "Read the working memory: the scratchpad of what matters about the user right now.",
      inputSchema: z.object({}),
      execute: async () => {
        const state = (await client.getWorkingMemory({ ...wm, ...agent })) as Schemas["WorkingMemoryState"];
        return { mode: state.mode, content: state.content ?? null, data: state.data ?? null, version: state.version ?? 0 };
      },
      toModelOutput: markedForModel("working_memory"),
    }),
    updateWorkingMemory: tool({
      description:
        "Update the working memory. Template (Markdown) mode: send the whole document, it replaces what is stored. " +
        "Schema (JSON) mode: send only the changed fields (an object, or its JSON text); null deletes a field.",
      inputSchema: z.object({
        memory: z.union([z.string(), z.record(z.string(), z.unknown())]).describe("The Markdown document, or the changed fields"),
      }),
      execute: async ({ memory }) => {
        // Template mode keeps a Markdown document: JSON sent in its place is refused, never stored over it.
        mode ??= client.getWorkingMemoryTool({ ...wm, ...agent }).then((ctx) => ("mode" in ctx ? ctx.mode : "template"));
        mode.catch(() => (mode = undefined));
        const sent = (await mode) === "schema" ? memory : markdownOnly(memory);
        // agent_id: the agent's own working memory of the user, the one getWorkingMemory reads
        const state = await client.applyWorkingMemoryTool({ memory: sent }, { ...wm, ...agent });
        return { version: state.version ?? 0, mode: state.mode as string };
      },
    }),
  };
}

/** A generateText result or a streamText onFinish event: what an exchange produced. */
export interface ExchangeResult {
  responseMessages?: readonly ModelMessage[];
  response?: { id?: string; timestamp?: Date; messages?: readonly ModelMessage[] };
}

export interface RecordExchangeOptions {
  userId: string;
  sessionId: string;
  agentId?: string;
  /** What was sent: a prompt string, or the new input messages (not the history already recorded). */
  prompt?: string | readonly ModelMessage[];
  /** The result of generateText, or the event streamText's onFinish gets. */
  result: ExchangeResult;
  /** Record system messages too (default false: instructions are not conversation). */
  includeSystem?: boolean;
  /** Default: derived from the response id, so recording the same exchange twice records it once. */
  clientToken?: string;
  /** The API's limits, when the project changed memory.limits (default: 100 turns a batch, 1 MiB a turn). */
  limits?: BatchLimits;
  /** Told when a turn was recorded cut to the content limit (default: console.warn). */
  onTruncated?: (message: string) => void;
}

/**
 * Record one exchange as turns: the prompt (user), each assistant message with its text and tool calls,
 * each tool result (tool). One batch, one client token.
 */
export async function recordExchange(client: MongomemClient, options: RecordExchangeOptions) {
  const input: ModelMessage[] = typeof options.prompt === "string" ? [{ role: "user", content: options.prompt }] : [...(options.prompt ?? [])];
  const output = options.result.responseMessages ?? options.result.response?.messages ?? [];
  const turns = [...input, ...output].flatMap((m) => modelMessageToTurns(m, options.includeSystem ?? false));
  if (turns.length === 0) return null;
  const token = options.clientToken ?? (await exchangeToken(options.sessionId, options.result, turns));
  // Batches of at most 100 turns (the API's max_batch), each with its own token derived from the exchange's,
  // so a repeated call records nothing twice; a content over 1 MiB is recorded cut, and reported.
  const { batches, truncated } = splitTurns(turns, options.limits);
  const recorded: RecordExchangeResult = { session_id: options.sessionId, user_id: options.userId, turns: [], truncated };
  for (const [i, batch] of batches.entries()) {
    const answer = await client.recordTurns(options.sessionId, {
      user_id: options.userId,
      ...(options.agentId ? { agent_id: options.agentId } : {}),
      client_token: i === 0 ? token : `${token}-${i}`,
      turns: batch,
    });
    Object.assign(recorded, { ...answer, turns: [...recorded.turns, ...answer.turns], truncated });
  }
  if (truncated.length) {
    const what = truncated.map((t) => `turn ${t.index} (${t.role}): ${t.droppedBytes} of ${t.bytes} bytes`).join("; ");
    (options.onTruncated ?? ((m) => console.warn(m)))(`mongomem: recorded cut to the API's content limit: ${what}`);
  }
  return recorded;
}

/** What recordExchange recorded: the API's answer (every batch's turns), and the turns that were recorded cut. */
export type RecordExchangeResult = Schemas["RecordTurnsResponse"] & { truncated: TruncatedTurn[] };

/**
 * An `onFinish` for streamText (or generateText) that records the exchange:
 * `streamText({ model, prompt, onFinish: recordOnFinish(client, { userId, sessionId, prompt }) })`.
 * A failure to record is reported to `onError` (default: console.warn), never thrown into the stream.
 */
export function recordOnFinish(
  client: MongomemClient,
  options: Omit<RecordExchangeOptions, "result"> & { onError?: (error: unknown) => void },
) {
  return async (event: ExchangeResult): Promise<void> => {
    try {
      await recordExchange(client, { ...options, result: event });
    } catch (error) {
      (options.onError ?? ((e) => console.warn("mongomem: recording the exchange failed", e)))(error);
    }
  };
}

/** The turns an AI SDK message is recorded as (a tool message gives one turn per result). */
export function modelMessageToTurns(message: ModelMessage, includeSystem = false): TurnIn[] {
  const metadata = { source: "ai-sdk" };
  switch (message.role) {
    case "system":
      return includeSystem && message.content.trim() ? [{ role: "system", content: message.content, metadata }] : [];
    case "user": {
      const text = typeof message.content === "string"
        ? message.content
        : message.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n");
      return text.trim() ? [{ role: "user", content: text, metadata }] : [];
    }
    case "assistant": {
      if (typeof message.content === "string") return message.content.trim() ? [{ role: "assistant", content: message.content, metadata }] : [];
      const text = message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
      const calls = message.content.flatMap((p) =>
        p.type === "tool-call" ? [{ id: toolId(p.toolCallId), name: p.toolName, arguments: asArguments(p.input) }] : [],
      );
      if (!text.trim() && calls.length === 0) return [];
      return [{ role: "assistant", content: text, ...(calls.length ? { tool_calls: calls } : {}), metadata }];
    }
    case "tool":
      return message.content.flatMap((p) => {
        if (p.type !== "tool-result") return [];
        const output = p.output as { type: string; value?: unknown; reason?: string };
        const value = output.type === "text" || output.type === "error-text" ? String(output.value) : output.type === "execution-denied" ? `denied: ${output.reason ?? ""}` : JSON.stringify(output.value ?? null);
        return [{ role: "tool" as const, content: value || "(empty)", tool_call_id: toolId(p.toolCallId), name: p.toolName, metadata }];
      });
    default:
      return [];
  }
}

function toolId(id: string): string {
  return ID.test(id) ? id : `call-${id.replace(/[^A-Za-z0-9._:@-]/g, "").slice(0, 100) || "x"}`;
}

function asArguments(input: unknown): Record<string, unknown> {
  if (input && typeof input === "object" && !Array.isArray(input)) {
    const text = JSON.stringify(input);
    // the API refuses keys with '.' or a leading '$' in a free-form map: keep such arguments as text
    if (!/"(\$|[^"]*\.)[^"]*":/.test(text)) return input as Record<string, unknown>;
    return { arguments_json: text.slice(0, 65_536) };
  }
  return { value: input ?? null };
}

async function exchangeToken(sessionId: string, result: ExchangeResult, turns: TurnIn[]): Promise<string> {
  const id = result.response?.id ?? "";
  const at = result.response?.timestamp instanceof Date ? result.response.timestamp.toISOString() : "";
  const text = `${sessionId}\n${id}\n${at}\n${JSON.stringify(turns)}`;
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return `ai-sdk-${[...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, 48)}`;
}

/** Template mode: the Markdown document as text; an object, or the JSON text of one, is refused. */
function markdownOnly(memory: string | Record<string, unknown>): string {
  const text = typeof memory === "string" ? memory.trim() : "";
  let json = typeof memory !== "string";
  if (!json && text.startsWith("{") && text.endsWith("}")) {
    try {
      const parsed: unknown = JSON.parse(text);
      json = Boolean(parsed) && typeof parsed === "object" && !Array.isArray(parsed);
    } catch {
      json = false;
    }
  }
  if (json) throw new Error("The working memory is a Markdown document (template mode): send the whole document as text, following the template, not JSON");
  return memory as string;
}
