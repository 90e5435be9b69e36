/**
 * The memory API over `fetch` (Node 20+, Bun, Deno, edge runtimes): one method per route, the request
 * and answer types generated from the OpenAPI document, the Python SDK's retry policy and client tokens.
 */
import { env } from "./env.js";
import { MongomemError, errorFromResponse } from "./errors.js";
import { RetryPolicy, sleep as defaultSleep, type RetryOptions } from "./retry.js";
import { ROUTES, resendSafe, type Route, type RouteName } from "./routes.js";
import type { BodyOf, PathOf, QueryOf, ResultOf, TurnIn, WorkingMemoryContext, WorkingMemoryState, WorkingMemoryUnchanged } from "./types.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:3000";

export interface MongomemClientOptions extends RetryOptions {
  /** The API (default: $MONGOMEM_URL, else http://127.0.0.1:3000; a deployed stack: its ApiUrl output). */
  baseUrl?: string;
  /** Sent as `x-api-key` (default: $MONGOMEM_API_KEY). */
  apiKey?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Each attempt's time limit in ms (default 10000). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** How to wait between retries (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
  /** Called before each retry. */
  onRetry?: (retryNumber: number, error: MongomemError, waitMs: number) => void;
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  headers?: Record<string, string>;
}

type Query = Record<string, string | number | boolean | string[] | null | undefined>;

interface CallArgs {
  path?: Record<string, string>;
  query?: object;
  body?: unknown;
}

/** A fresh client token (uuid4): a retried record write is replayed by the API, never recorded twice. */
export function clientToken(prefix = "ts"): string {
  return `${prefix}-${globalThis.crypto.randomUUID()}`;
}

export class MongomemClient {
  readonly baseUrl: string;
  readonly policy: RetryPolicy;
  readonly timeoutMs: number;
  private readonly headers: Record<string, string>;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly onRetry?: MongomemClientOptions["onRetry"];

  constructor(options: MongomemClientOptions = {}) {
    // the routes start with /v1: a base URL given with it ("https://.../prod/v1") is taken without it
    this.baseUrl = (options.baseUrl ?? env("MONGOMEM_URL") ?? DEFAULT_BASE_URL).replace(/\/+$/, "").replace(/\/v1$/, "");
    this.policy = new RetryPolicy(options);
    this.timeoutMs = validTimeout(options.timeoutMs ?? 10_000, "timeoutMs");
    this.headers = { ...options.headers };
    const apiKey = options.apiKey ?? env("MONGOMEM_API_KEY");
    if (apiKey) this.headers["x-api-key"] = apiKey;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? defaultSleep;
    this.onRetry = options.onRetry;
  }

  // -- short-term memory: turns and sessions ---------------------------------------------------------

  /** Record a batch of turns in order; a client token (generated when absent) makes retries safe. */
  recordTurns(sessionId: string, body: BodyOf<"recordTurns">, options?: RequestOptions): Promise<ResultOf<"recordTurns">> {
    const withToken = { ...body, client_token: body.client_token ?? clientToken() };
    return this.call("recordTurns", { path: { session_id: sessionId }, body: withToken }, options);
  }

  /** Record one turn (`user_id`, `agent_id` and `client_token` go on the batch). */
  recordTurn(
    sessionId: string,
    turn: TurnIn & { user_id?: string | null; agent_id?: string | null; client_token?: string | null },
    options?: RequestOptions,
  ): Promise<ResultOf<"recordTurns">> {
    const { user_id, agent_id, client_token, ...one } = turn;
    return this.recordTurns(sessionId, { user_id, agent_id, client_token, turns: [one] }, options);
  }

  /** The newest `limit` turns, oldest first; `before_seq` pages further back. */
  listTurns(sessionId: string, query: QueryOf<"listTurns"> = {}, options?: RequestOptions): Promise<ResultOf<"listTurns">> {
    return this.call("listTurns", { path: { session_id: sessionId }, query }, options);
  }

  /** Delete the session's turns from `from_seq` on (all of them without it); seqs are not reused. */
  deleteTurns(sessionId: string, query: QueryOf<"deleteTurns"> = {}, options?: RequestOptions): Promise<ResultOf<"deleteTurns">> {
    return this.call("deleteTurns", { path: { session_id: sessionId }, query }, options);
  }

  getSession(sessionId: string, query: QueryOf<"getSession"> = {}, options?: RequestOptions): Promise<ResultOf<"getSession">> {
    return this.call("getSession", { path: { session_id: sessionId }, query }, options);
  }

  /** Promote the session's unpromoted turns to a snapshot now (extraction follows in the background). */
  flush(sessionId: string, query: QueryOf<"flush"> = {}, options?: RequestOptions): Promise<ResultOf<"flush">> {
    return this.call("flush", { path: { session_id: sessionId }, query }, options);
  }

  /** Import past conversations with their timestamps (sending it again imports nothing twice). */
  importHistory(body: BodyOf<"importHistory">, options?: RequestOptions): Promise<ResultOf<"importHistory">> {
    return this.call("importHistory", { body }, options);
  }

  // -- long-term memories ------------------------------------------------------------------------------

  /** Write a memory; reconciled, it may UPDATE or REINFORCE an existing one (never re-sent after a 5xx). */
  createMemory(body: BodyOf<"createMemory">, options?: RequestOptions): Promise<ResultOf<"createMemory">> {
    return this.call("createMemory", { body }, options);
  }

  listMemories(query: QueryOf<"listMemories"> = {}, options?: RequestOptions): Promise<ResultOf<"listMemories">> {
    return this.call("listMemories", { query }, options);
  }

  /** Every matching memory, following the cursor page by page. */
  async *iterMemories(query: QueryOf<"listMemories"> = {}, options?: RequestOptions): AsyncGenerator<ResultOf<"listMemories">["memories"][number]> {
    let cursor = query.cursor;
    const asked = new Set<string>();
    do {
      if (cursor) asked.add(cursor);
      const page = await this.listMemories({ ...query, cursor }, options);
      yield* page.memories;
      cursor = page.next_cursor;
      // a cursor asked with already would be followed forever: the answer is not one the API gives
      if (cursor && asked.has(cursor)) {
        throw new MongomemError(200, "invalid_response", "the API answered a cursor it was asked with already: the list never ends");
      }
    } while (cursor);
  }

  /** A user's conflicting facts: active memories of one key that say different things. */
  listConflicts(query: QueryOf<"listConflicts"> = {}, options?: RequestOptions): Promise<ResultOf<"listConflicts">> {
    return this.call("listConflicts", { query }, options);
  }

  getMemory(memoryId: string, query: QueryOf<"getMemory"> = {}, options?: RequestOptions): Promise<ResultOf<"getMemory">> {
    return this.call("getMemory", { path: { memory_id: memoryId }, query }, options);
  }

  deleteMemory(memoryId: string, query: QueryOf<"deleteMemory"> = {}, options?: RequestOptions): Promise<ResultOf<"deleteMemory">> {
    return this.call("deleteMemory", { path: { memory_id: memoryId }, query }, options);
  }

  /** Hybrid (vector + keyword) search over the user's memories and the org's. */
  searchMemories(body: BodyOf<"searchMemories">, options?: RequestOptions): Promise<ResultOf<"searchMemories">> {
    return this.call("searchMemories", { body }, options);
  }

  listDomains(query: QueryOf<"listDomains"> = {}, options?: RequestOptions): Promise<ResultOf<"listDomains">> {
    return this.call("listDomains", { query }, options);
  }

  /** A procedural memory as an Agent Skill (SKILL.md and its folder name). */
  getSkill(memoryId: string, query: QueryOf<"getSkill"> = {}, options?: RequestOptions): Promise<ResultOf<"getSkill">> {
    return this.call("getSkill", { path: { memory_id: memoryId }, query }, options);
  }

  procedureFeedback(memoryId: string, body: BodyOf<"procedureFeedback">, options?: RequestOptions): Promise<ResultOf<"procedureFeedback">> {
    return this.call("procedureFeedback", { path: { memory_id: memoryId }, body }, options);
  }

  discoverProcedures(body: BodyOf<"discoverProcedures">, options?: RequestOptions): Promise<ResultOf<"discoverProcedures">> {
    return this.call("discoverProcedures", { body }, options);
  }

  // -- recall and context ------------------------------------------------------------------------------

  /** Old messages similar to `query` (semantic recall), with `message_range` turns around each match. */
  recall(body: BodyOf<"recall">, options?: RequestOptions): Promise<ResultOf<"recall">> {
    return this.call("recall", { body }, options);
  }

  /** Working memory, relevant memories, recent and recalled turns as one block within a token budget. */
  buildContext(body: BodyOf<"buildContext">, options?: RequestOptions): Promise<ResultOf<"buildContext">> {
    return this.call("buildContext", { body }, options);
  }

  // -- working memory ----------------------------------------------------------------------------------

  /** The working memory (`{unchanged: true}` when `if_none_match` is still its cache key). */
  getWorkingMemory(query: QueryOf<"getWorkingMemory"> = {}, options?: RequestOptions): Promise<WorkingMemoryState | WorkingMemoryUnchanged> {
    return this.call("getWorkingMemory", { query }, options) as Promise<WorkingMemoryState | WorkingMemoryUnchanged>;
  }

  /** Replace the working memory whole (PUT): `{content}` (template mode) or `{data}` (schema mode). */
  replaceWorkingMemory(body: BodyOf<"replaceWorkingMemory">, query: QueryOf<"replaceWorkingMemory"> = {}, options?: RequestOptions): Promise<ResultOf<"replaceWorkingMemory">> {
    return this.call("replaceWorkingMemory", { query, body }, options);
  }

  /** Merge into the working memory (PATCH; template mode replaces the text). */
  updateWorkingMemory(body: BodyOf<"updateWorkingMemory">, query: QueryOf<"updateWorkingMemory"> = {}, options?: RequestOptions): Promise<ResultOf<"updateWorkingMemory">> {
    return this.call("updateWorkingMemory", { query, body }, options);
  }

  clearWorkingMemory(query: QueryOf<"clearWorkingMemory"> = {}, options?: RequestOptions): Promise<ResultOf<"clearWorkingMemory">> {
    return this.call("clearWorkingMemory", { query }, options);
  }

  /** The agent's update tool, its instructions and the current working memory. */
  getWorkingMemoryTool(query: QueryOf<"getWorkingMemoryTool"> = {}, options?: RequestOptions): Promise<WorkingMemoryContext | WorkingMemoryUnchanged> {
    return this.call("getWorkingMemoryTool", { query }, options) as Promise<WorkingMemoryContext | WorkingMemoryUnchanged>;
  }

  /** Apply an update-tool call as the model made it: `{memory: ...}` or the memory itself. */
  applyWorkingMemoryTool(args: BodyOf<"applyWorkingMemoryTool">, query: QueryOf<"applyWorkingMemoryTool"> = {}, options?: RequestOptions): Promise<ResultOf<"applyWorkingMemoryTool">> {
    return this.call("applyWorkingMemoryTool", { query, body: args }, options);
  }

  // -- threads -------------------------------------------------------------------------------------------

  /** A new thread; `metadata.workingMemory` seeds the configured working-memory scope (409 if it exists). */
  createThread(body: BodyOf<"createThread">, options?: RequestOptions): Promise<ResultOf<"createThread">> {
    return this.call("createThread", { body }, options);
  }

  listThreads(query: QueryOf<"listThreads"> = {}, options?: RequestOptions): Promise<ResultOf<"listThreads">> {
    return this.call("listThreads", { query }, options);
  }

  getThread(threadId: string, query: QueryOf<"getThread"> = {}, options?: RequestOptions): Promise<ResultOf<"getThread">> {
    return this.call("getThread", { path: { thread_id: threadId }, query }, options);
  }

  /** A new title and/or metadata (replaced whole); `metadata.workingMemory` replaces working memory. */
  updateThread(threadId: string, body: BodyOf<"updateThread">, query: QueryOf<"updateThread"> = {}, options?: RequestOptions): Promise<ResultOf<"updateThread">> {
    return this.call("updateThread", { path: { thread_id: threadId }, query, body }, options);
  }

  /** Delete the thread with its turns, snapshots, recall entries and thread working memory. */
  deleteThread(threadId: string, query: QueryOf<"deleteThread"> = {}, options?: RequestOptions): Promise<ResultOf<"deleteThread">> {
    return this.call("deleteThread", { path: { thread_id: threadId }, query }, options);
  }

  /** Copy the thread's turns and thread working memory to a new thread. */
  cloneThread(threadId: string, body: BodyOf<"cloneThread"> = {}, query: QueryOf<"cloneThread"> = {}, options?: RequestOptions): Promise<ResultOf<"cloneThread">> {
    return this.call("cloneThread", { path: { thread_id: threadId }, query, body }, options);
  }

  // -- snapshots, users, the pipeline ----------------------------------------------------------------------

  getSnapshot(snapshotId: string, query: QueryOf<"getSnapshot"> = {}, options?: RequestOptions): Promise<ResultOf<"getSnapshot">> {
    return this.call("getSnapshot", { path: { snapshot_id: snapshotId }, query }, options);
  }

  retrySnapshot(snapshotId: string, body: BodyOf<"retrySnapshot">, query: QueryOf<"retrySnapshot"> = {}, options?: RequestOptions): Promise<ResultOf<"retrySnapshot">> {
    return this.call("retrySnapshot", { path: { snapshot_id: snapshotId }, query, body }, options);
  }

  /** The tenant's snapshots whose extraction failed for a kind (the dead letters), newest first. */
  listFailedSnapshots(query: QueryOf<"listFailedSnapshots"> = {}, options?: RequestOptions): Promise<ResultOf<"listFailedSnapshots">> {
    return this.call("listFailedSnapshots", { query }, options);
  }

  listUsers(query: QueryOf<"listUsers"> = {}, options?: RequestOptions): Promise<ResultOf<"listUsers">> {
    return this.call("listUsers", { query }, options);
  }

  listUserSessions(userId: string, query: QueryOf<"listUserSessions"> = {}, options?: RequestOptions): Promise<ResultOf<"listUserSessions">> {
    return this.call("listUserSessions", { path: { user_id: userId }, query }, options);
  }

  /** The user's latest search, recall and context calls with what each returned and why. */
  listUserRequests(userId: string, query: QueryOf<"listUserRequests"> = {}, options?: RequestOptions): Promise<ResultOf<"listUserRequests">> {
    return this.call("listUserRequests", { path: { user_id: userId }, query }, options);
  }

  /** Erase a user: turns, sessions, memories, working memory, index entries. */
  deleteUser(userId: string, options?: RequestOptions): Promise<ResultOf<"deleteUser">> {
    return this.call("deleteUser", { path: { user_id: userId } }, options);
  }

  memoryStats(query: QueryOf<"memoryStats"> = {}, options?: RequestOptions): Promise<ResultOf<"memoryStats">> {
    return this.call("memoryStats", { query }, options);
  }

  pipeline(query: QueryOf<"pipeline"> = {}, options?: RequestOptions): Promise<ResultOf<"pipeline">> {
    return this.call("pipeline", { query }, options);
  }

  /** Readiness (LLM and embedding providers, with reasons), configuration and backlog. */
  status(options?: RequestOptions): Promise<ResultOf<"status">> {
    return this.call("status", {}, options);
  }

  // -- administration ----------------------------------------------------------------------------------------

  adminStatus(options?: RequestOptions): Promise<ResultOf<"adminStatus">> {
    return this.call("adminStatus", {}, options);
  }

  listKeys(query: QueryOf<"listKeys"> = {}, options?: RequestOptions): Promise<ResultOf<"listKeys">> {
    return this.call("listKeys", { query }, options);
  }

  createKey(body: BodyOf<"createKey">, options?: RequestOptions): Promise<ResultOf<"createKey">> {
    return this.call("createKey", { body }, options);
  }

  revokeKey(keyId: string, options?: RequestOptions): Promise<ResultOf<"revokeKey">> {
    return this.call("revokeKey", { path: { key_id: keyId } }, options);
  }

  // -- any route ---------------------------------------------------------------------------------------------

  /** Call a route of the table by its method name, with its typed path, query and body. */
  call<N extends RouteName>(
    name: N,
    args: { path?: PathOf<N>; query?: QueryOf<N>; body?: BodyOf<N> },
    options?: RequestOptions,
  ): Promise<ResultOf<N>> {
    const route: Route = ROUTES[name];
    return this.send(route.method, route.path, args as CallArgs, resendSafe(route), options) as Promise<ResultOf<N>>;
  }

  /** Call any path; returns the decoded JSON. `safe`: the request may be sent again (default: by method). */
  request<T = unknown>(
    method: Route["method"],
    path: string,
    args: { query?: Query; body?: unknown; safe?: boolean } = {},
    options?: RequestOptions,
  ): Promise<T> {
    const safe = args.safe ?? resendSafe({ op: "get_status_v1_status_get", method, path });
    return this.send(method, path, { query: args.query, body: args.body }, safe, options) as Promise<T>;
  }

  private async send(method: string, template: string, args: CallArgs, safe: boolean, options?: RequestOptions): Promise<unknown> {
    const url = this.url(template, args.path, args.query);
    const headers: Record<string, string> = { accept: "application/json", ...this.headers, ...options?.headers };
    const body = args.body === undefined ? undefined : JSON.stringify(args.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    const attempt = () => this.attempt(method, url, headers, body, options);
    return this.policy.run(attempt, safe, this.sleep, this.onRetry);
  }

  private async attempt(method: string, url: string, headers: Record<string, string>, body: string | undefined, options?: RequestOptions): Promise<unknown> {
    const timeoutMs = options?.timeoutMs === undefined ? this.timeoutMs : validTimeout(options.timeoutMs, "options.timeoutMs");
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException("timed out", "TimeoutError")), timeoutMs);
    const outer = options?.signal;
    const relay = () => controller.abort(outer?.reason);
    if (outer?.aborted) relay();
    outer?.addEventListener("abort", relay, { once: true });
    const where = new URL(this.baseUrl).host;
    let response: Response;
    try {
      // A redirect is never followed: fetch would re-send the x-api-key (and a 307's body) to whatever
      // origin the answer names; it drops only Authorization across origins.
      response = await this.fetchImpl(url, { method, headers, body, signal: controller.signal, redirect: "manual" });
      if (response.status >= 400) throw await errorFromResponse(response);
      if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
        await response.body?.cancel().catch(() => undefined);
        throw new MongomemError(response.status || null, "invalid_response", "the API answered with a redirect, not followed");
      }
      const text = await response.text();
      let answer: unknown;
      try {
        answer = JSON.parse(text) as unknown;
      } catch (cause) {
        const what = text ? "non-JSON" : "no content";
        throw new MongomemError(null, "invalid_response", `the API answered with ${what}`, null, null, { cause });
      }
      // every route answers a JSON document: anything else is no answer a method could return
      if (answer === null || typeof answer !== "object") {
        throw new MongomemError(response.status, "invalid_response", "the API answered with no JSON object");
      }
      return answer;
    } catch (error) {
      if (error instanceof MongomemError) throw error;
      if (outer?.aborted) throw error; // the caller cancelled: not ours to retry
      if (controller.signal.aborted) {
        throw new MongomemError(null, "timeout", `${where} did not answer within ${timeoutMs} ms`, null, null, { cause: error });
      }
      throw new MongomemError(null, "unreachable", `cannot reach ${where}: ${describe(error)}`, null, null, { cause: error });
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener("abort", relay);
    }
  }

  private url(template: string, path: Record<string, string> | undefined, query: object | undefined): string {
    const filled = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = path?.[name];
      if (value === undefined || value === null) throw new TypeError(`missing path parameter ${name}`);
      if (String(value) === "") throw new TypeError(`${name} must not be empty`);
      return encodeURIComponent(String(value));
    });
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      search.append(key, Array.isArray(value) ? value.join(",") : typeof value === "object" ? JSON.stringify(value) : String(value));
    }
    const qs = search.toString();
    return `${this.baseUrl}${filled}${qs ? `?${qs}` : ""}`;
  }
}

/** A time limit in ms: a finite number above 0 (a timer of NaN or 0 would fire at once). */
function validTimeout(value: number, name: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`${name} must be a number of milliseconds above 0, not ${String(value)}`);
  }
  return value;
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
