/**
 * Mastra messages <-> mongomem turns. One Mastra message is one turn: its text is the turn's content (what
 * extraction and recall read), its tool calls the turn's `tool_calls`, and the message itself, verbatim, is
 * kept in `metadata.mastra_message` so it is read back exactly as it was saved.
 */
import type { MastraDBMessage } from "@mastra/core/agent/message-list";

import type { Schemas } from "../types.js";

type TurnIn = Schemas["TurnIn"];
type TurnOut = Schemas["TurnOut"];
type Part = MastraDBMessage["content"]["parts"][number];

/** The API's limits on a free-form map (metadata, tool arguments). */
const MAX_MAP_STRING = 65_536;
const MAX_MAP_DEPTH = 8;
const MAX_KEY = 256;
// `.` and `..` alone are refused: URL clients drop such path segments (dot-segments).
const ID = /^(?!\.{1,2}$)[A-Za-z0-9._:@-]{1,128}$/;

export const SOURCE = "mastra";

/** The text of a message: its text parts (or its legacy `content` string), joined. */
export function textOf(message: MastraDBMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  if (typeof content?.content === "string" && content.content.trim()) return content.content;
  return (content?.parts ?? [])
    .filter((part): part is Extract<Part, { type: "text" }> => part.type === "text")
    .map((part) => part.text)
    .join("\n")
    .trim();
}

function toolInvocations(message: MastraDBMessage) {
  return (message.content?.parts ?? []).flatMap((part) => (part.type === "tool-invocation" ? [part.toolInvocation] : []));
}

/** The turn a Mastra message is recorded as, or null for what is never stored (system prompts, transient). */
export function messageToTurn(message: MastraDBMessage): TurnIn | null {
  if (message.role === "system") return null;
  const text = textOf(message);
  const calls = message.role === "assistant"
    ? toolInvocations(message).map((call) => ({
        id: ID.test(call.toolCallId) ? call.toolCallId : `call-${hash(call.toolCallId)}`,
        name: call.toolName.slice(0, 256) || "tool",
        arguments: safeMap(call.args),
      }))
    : [];
  const verbatim = JSON.stringify(message);
  const metadata: Record<string, unknown> = { source: SOURCE, mastra_id: message.id };
  if (verbatim.length <= MAX_MAP_STRING) metadata.mastra_message = verbatim;
  if (message.type) metadata.mastra_type = message.type;
  const partTypes = [...new Set((message.content?.parts ?? []).map((p) => p.type))];
  const content = text || (calls.length ? "" : `[${partTypes.join(", ") || "empty message"}]`);
  return {
    // signals (reminders, user-message signals) are conversation the agent saw but not the user's words
    role: message.role === "signal" ? "system" : message.role,
    content,
    ...(calls.length ? { tool_calls: calls.slice(0, 64) } : {}),
    metadata,
    timestamp: toDate(message.createdAt).toISOString(),
  };
}

/** The Mastra message a stored turn stands for (turns recorded by other clients get a text message). */
export function turnToMessage(turn: TurnOut | Schemas["RecalledTurn"], resourceId: string, threadId?: string): MastraDBMessage | null {
  const thread = threadId ?? ("session_id" in turn ? turn.session_id : (turn as { thread?: string }).thread) ?? "";
  const stored = turn.metadata?.mastra_message;
  if (typeof stored === "string") {
    try {
      const message = JSON.parse(stored) as MastraDBMessage;
      message.createdAt = new Date(message.createdAt);
      // a cloned thread's copy: same message, another thread, so another id
      if (message.threadId && message.threadId !== thread) message.id = `${message.id}@${thread}`;
      message.threadId = thread;
      message.resourceId = resourceId;
      return message;
    } catch {
      // fall through: rebuild it from the turn
    }
  }
  if (turn.role === "tool") return null;
  const id = typeof turn.metadata?.mastra_id === "string" ? turn.metadata.mastra_id : turn.turn_id;
  const parts: Part[] = [];
  if (turn.content) parts.push({ type: "text", text: turn.content });
  for (const call of ("tool_calls" in turn ? turn.tool_calls : null) ?? []) {
    parts.push({ type: "tool-invocation", toolInvocation: { state: "call", toolCallId: call.id, toolName: call.name, args: call.arguments ?? {} } });
  }
  return {
    id,
    role: turn.role,
    createdAt: new Date(turn.timestamp),
    threadId: thread,
    resourceId,
    content: { format: 2, parts, content: turn.content },
  };
}

/** The message's id as stored (for duplicate checks): `mastra_id`, else the turn id. */
export function storedId(turn: TurnOut): string {
  return typeof turn.metadata?.mastra_id === "string" ? turn.metadata.mastra_id : turn.turn_id;
}

export function toDate(value: Date | string | number | undefined): Date {
  const date = value instanceof Date ? value : new Date(value ?? Date.now());
  return Number.isNaN(date.getTime()) ? new Date() : date;
}

/** Tool arguments the API can store as they are, else their JSON text (keys with '.' or '$', deep nesting). */
function safeMap(args: unknown): Record<string, unknown> {
  if (args && typeof args === "object" && !Array.isArray(args) && storable(args, 1)) return args as Record<string, unknown>;
  const text = JSON.stringify(args ?? null) ?? "null";
  return { arguments_json: text.slice(0, MAX_MAP_STRING) };
}

function storable(value: unknown, depth: number): boolean {
  if (depth > MAX_MAP_DEPTH) return false;
  if (typeof value === "string") return value.length <= MAX_MAP_STRING;
  if (typeof value === "number") return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value));
  if (value === null || typeof value === "boolean") return true;
  if (Array.isArray(value)) return value.every((item) => storable(item, depth + 1));
  if (typeof value === "object") {
    return Object.entries(value).every(
      ([key, item]) => key.length > 0 && key.length <= MAX_KEY && !key.startsWith("$") && !key.includes(".") && !key.includes("\0") && storable(item, depth + 1),
    );
  }
  return false;
}

/** SHA-256 (hex) of a text: the client token of a batch of messages is derived from their ids. */
export async function sha256(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A short stable hash (FNV-1a, hex) for an id the API would refuse. */
export function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}
