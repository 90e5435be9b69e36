/** The typed client against the local stack, as an application uses it. */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";

import { MongomemClient, MongomemError, ROUTES, RetryPolicy } from "@mongomem/client";

import { BASE_URL, client, eventually, uid } from "./helpers.js";

const committed = JSON.parse(await readFile(new URL("../../openapi.json", import.meta.url), "utf8")) as {
  paths: Record<string, Record<string, { operationId: string }>>;
};

test("the API serves the very document the committed types were generated from", async () => {
  // Given the stack's live document
  const served = (await (await fetch(`${BASE_URL}/v1/openapi.json`)).json()) as unknown;
  // Then it is openapi.json (otherwise: make ts-types, and commit what it regenerates)
  assert.deepEqual(served, committed);
});

test("every operation of the document has one camelCase method, with its method and path", () => {
  const byOp = new Map(Object.entries(ROUTES).map(([name, route]) => [route.op as string, { name, route }]));
  const seen = new Set<string>();
  for (const [path, operations] of Object.entries(committed.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const entry = byOp.get(operation.operationId);
      assert.ok(entry, `${method.toUpperCase()} ${path} (${operation.operationId}) has no client method`);
      assert.equal(entry.route.method, method.toUpperCase(), entry.name);
      assert.equal(entry.route.path, path, entry.name);
      assert.match(entry.name, /^[a-z][A-Za-z]+$/);
      assert.equal(typeof (MongomemClient.prototype as unknown as Record<string, unknown>)[entry.name], "function", `client.${entry.name}()`);
      seen.add(operation.operationId);
    }
  }
  assert.equal(seen.size, Object.keys(ROUTES).length, "a method for an operation the document no longer has");
});

test("record, list, flush, recall and context return the API's models", async () => {
  const mem = client();
  const session = uid("chat");
  const user = uid("ana");
  const recorded = await mem.recordTurns(session, {
    user_id: user,
    turns: [
      { role: "user", content: "I moved to Lisbon, my home airport is LIS now." },
      { role: "assistant", content: "Noted: Lisbon (LIS)." },
    ],
  });
  assert.deepEqual(recorded.turns.map((t) => t.seq), [1, 2]);
  const one = await mem.recordTurn(session, { user_id: user, role: "user", content: "And I fly to Porto on Friday." });
  assert.equal(one.turns[0]!.seq, 3);
  const page = await mem.listTurns(session, { user_id: user, limit: 2 });
  assert.deepEqual(page.turns.map((t) => t.content), ["Noted: Lisbon (LIS).", "And I fly to Porto on Friday."]);
  assert.equal(page.next_before_seq, 2);
  const state = await mem.getSession(session, { user_id: user });
  assert.equal(state.turn_count, 3);
  const recalled = await eventually(async () => {
    const answer = await mem.recall({ query: "which airport", user_id: user, top_k: 1, message_range: 0 });
    return answer.matched.length ? answer : null;
  }, "the turns to be recallable");
  assert.equal(recalled.matched[0], `${session}:1`);
  const context = await mem.buildContext({ user_id: user, session_id: session, query: "travel", token_budget: 512 });
  assert.match(context.context, /Porto on Friday/);
  const flushed = await mem.flush(session, { user_id: user });
  assert.ok("snapshot_id" in flushed || "snapshots" in flushed || typeof flushed === "object");
});

test("memories: write, read with history, search, list every page, delete", async () => {
  const mem = client();
  const user = uid("bo");
  const first = await mem.createMemory({ user_id: user, type: "semantic", payload: { subject: user, attribute: "home airport", value: "OPO" } });
  assert.equal(first.decision, "ADD");
  const second = await mem.createMemory({ user_id: user, type: "semantic", payload: { subject: user, attribute: "home airport", value: "LIS" } });
  assert.equal(second.decision, "UPDATE");
  const read = await mem.getMemory(second.memory.memory_id, { user_id: user, history: true });
  assert.equal(read.history?.length, 2);
  const found = await mem.searchMemories({ user_id: user, query: "home airport", top_k: 3 });
  assert.equal(found.results[0]?.memory_id, second.memory.memory_id);
  for (let i = 0; i < 3; i++) await mem.createMemory({ user_id: user, type: "semantic", payload: { subject: user, attribute: `pet ${i}`, value: `cat ${i}` } });
  const all = [];
  for await (const memory of mem.iterMemories({ user_id: user, type: "semantic", status: "active", limit: 2 })) all.push(memory.memory_id);
  assert.equal(all.length, 4);
  const deleted = await mem.deleteMemory(second.memory.memory_id, { user_id: user });
  assert.ok(deleted);
  assert.equal((await mem.getMemory(second.memory.memory_id, { user_id: user })).memory.status, "deleted");
});

test("iterMemories stops with invalid_response at a cursor the API gave already, and follows one that moves", async () => {
  // Given a server whose next cursor never moves, and one that goes back to a cursor it gave
  const serving = (cursors: (string | null)[]) => {
    const asked: (string | null)[] = [];
    const impl: typeof fetch = async (input) => {
      asked.push(new URL(String(input)).searchParams.get("cursor"));
      if (asked.length > 10) return new Response(JSON.stringify({ error: { code: "stop", message: "enough", details: null } }), { status: 400, headers: { "content-type": "application/json" } });
      const body = { memories: [], next_cursor: cursors[Math.min(asked.length, cursors.length) - 1] };
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    };
    return { impl, asked };
  };
  for (const cursors of [["2026-01-02T00:00:00+00:00"], ["2026-01-02T00:00:00+00:00", "2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00"]]) {
    const { impl, asked } = serving(cursors);
    const mem = new MongomemClient({ baseUrl: "http://memory.test", retries: 0, fetch: impl });
    // When every memory is iterated, Then the SDK's own error ends it, not the server's refusal
    const error = await (async () => {
      for await (const _ of mem.iterMemories({ user_id: "ana" })) void _;
    })().catch((e: unknown) => e);
    assert.ok(error instanceof MongomemError && error.code === "invalid_response", String(error));
    assert.equal(asked.length, new Set(cursors).size + 1, JSON.stringify(asked));
  }
  const moving = serving(["2026-01-02T00:00:00+00:00", "2026-01-01T00:00:00+00:00", null]);
  const mem = new MongomemClient({ baseUrl: "http://memory.test", retries: 0, fetch: moving.impl });
  for await (const _ of mem.iterMemories({ user_id: "ana" })) void _;
  assert.deepEqual(moving.asked, [null, "2026-01-02T00:00:00+00:00", "2026-01-01T00:00:00+00:00"]);
});

test("threads and working memory through the client", async () => {
  const mem = client();
  const user = uid("cy");
  const thread = uid("trip");
  const created = await mem.createThread({ thread_id: thread, user_id: user, title: "Porto trip", metadata: { topic: "travel" } });
  assert.equal(created.title, "Porto trip");
  await assert.rejects(mem.createThread({ thread_id: thread, user_id: user }), (e: MongomemError) => e.status === 409);
  const renamed = await mem.updateThread(thread, { title: "Porto, May" }, { user_id: user });
  assert.equal(renamed.title, "Porto, May");
  assert.deepEqual((await mem.listThreads({ user_id: user })).threads.map((t) => t.thread_id), [thread]);
  const written = await mem.replaceWorkingMemory({ content: "# User\n- **Name**: Cy\n- **City**: Porto\n" }, { user_id: user });
  assert.equal(written.version, 1);
  const applied = await mem.applyWorkingMemoryTool({ memory: "# User\n- **Name**: Cy\n- **City**: Braga\n" }, { user_id: user });
  assert.match(applied.content ?? "", /Braga/);
  const tool = await mem.getWorkingMemoryTool({ user_id: user });
  assert.ok("tool" in tool && tool.tool?.name === "updateWorkingMemory");
  const copy = await mem.cloneThread(thread, { new_thread_id: `${thread}-copy` }, { user_id: user });
  assert.equal(copy.thread.thread_id, `${thread}-copy`);
  const gone = await mem.deleteThread(`${thread}-copy`, { user_id: user });
  assert.ok(gone);
});

test("a 422 is a MongomemError with code, message and each bad field", async () => {
  const mem = client();
  const error = await mem.recordTurn(uid("s"), { user_id: "ana", role: "robot" as never, content: "hello" }).catch((e: unknown) => e);
  assert.ok(error instanceof MongomemError);
  assert.equal(error.status, 422);
  assert.equal(error.code, "validation_error");
  assert.ok(error.message.length > 0);
  assert.deepEqual(error.fieldErrors.map((f) => f.path), ["turns.0.role"]);
});

test("an API nobody listens on is status null, code unreachable; a silent one is code timeout", async () => {
  const closed = new MongomemClient({ baseUrl: "http://127.0.0.1:9", retries: 1, backoffMs: 1 });
  const error = await closed.status().catch((e: unknown) => e);
  assert.ok(error instanceof MongomemError);
  assert.equal(error.status, null);
  assert.equal(error.code, "unreachable");
  const silent = new MongomemClient({ baseUrl: BASE_URL, retries: 0, fetch: (_url, init) => new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason))), timeoutMs: 50 });
  const timedOut = await silent.status().catch((e: unknown) => e);
  assert.ok(timedOut instanceof MongomemError && timedOut.code === "timeout" && timedOut.status === null);
});

/** A fetch that sends to the real stack but lets a test answer (or lose) some requests itself. */
function faulty(fault: (method: string, url: string, n: number) => "lose-reply" | "drop" | Response | null) {
  const calls: { method: string; url: string; body: string | undefined }[] = [];
  const impl: typeof fetch = async (input, init) => {
    const url = String(input);
    const method = init?.method ?? "GET";
    calls.push({ method, url, body: init?.body as string | undefined });
    const n = calls.filter((c) => c.method === method && c.url === url).length;
    const action = fault(method, url, n);
    if (action instanceof Response) return action;
    if (action === "drop") throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
    const response = await fetch(input, init);
    if (action === "lose-reply") throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
    return response;
  };
  return { impl, calls };
}

const busy = (headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error: { code: "busy", message: "try later", details: null } }), { status: 429, headers: { "content-type": "application/json", ...headers } });

test("a record write whose reply is lost is sent again with the same client token and recorded once", async () => {
  const { impl, calls } = faulty((method, url, n) => (method === "POST" && url.includes("/turns") && n === 1 ? "lose-reply" : null));
  const waits: number[] = [];
  const mem = new MongomemClient({ baseUrl: BASE_URL, fetch: impl, sleep: async (ms) => void waits.push(ms), backoffMs: 1 });
  const session = uid("lost");
  const answer = await mem.recordTurns(session, { user_id: "dee", turns: [{ role: "user", content: "once only" }] });
  assert.equal(answer.replayed, true, "the second send is the API's replay of the first");
  const posts = calls.filter((c) => c.method === "POST");
  assert.equal(posts.length, 2);
  assert.equal(JSON.parse(posts[0]!.body!).client_token, JSON.parse(posts[1]!.body!).client_token);
  assert.match(JSON.parse(posts[0]!.body!).client_token, /^ts-[0-9a-f-]{36}$/);
  const turns = await client().listTurns(session, { user_id: "dee" });
  assert.equal(turns.turns.length, 1);
});

test("429 is retried after Retry-After, and a client gives up with the API's error", async () => {
  const { impl, calls } = faulty((method, url, n) => (url.endsWith("/v1/status") && n <= 2 ? busy({ "retry-after": "2" }) : null));
  const waits: number[] = [];
  const mem = new MongomemClient({ baseUrl: BASE_URL, fetch: impl, sleep: async (ms) => void waits.push(ms) });
  const status = await mem.status();
  assert.equal(status.ready, true);
  assert.deepEqual(waits, [2000, 2000]);
  assert.equal(calls.length, 3);
  const always = faulty(() => busy({ "retry-after": "999" }));
  const giving = new MongomemClient({ baseUrl: BASE_URL, fetch: always.impl, retries: 2, sleep: async (ms) => void waits.push(ms) });
  const error = await giving.status().catch((e: unknown) => e);
  assert.ok(error instanceof MongomemError && error.status === 429 && error.code === "busy" && error.retryAfter === 999);
  assert.equal(always.calls.length, 3);
  assert.equal(waits.at(-1), 30_000, "Retry-After is honoured up to 30 s");
});

test("a write that must not run twice is not re-sent after a 502 or a lost reply, but is after a 503", async () => {
  const user = uid("eve");
  const bad = faulty((method, url) => (method === "POST" && url.endsWith("/v1/memories") ? new Response("bad gateway", { status: 502 }) : null));
  const mem = new MongomemClient({ baseUrl: BASE_URL, fetch: bad.impl, sleep: async () => {} });
  const error = await mem.createMemory({ user_id: user, type: "semantic", payload: { subject: user, attribute: "a", value: "b" } }).catch((e: unknown) => e);
  assert.ok(error instanceof MongomemError && error.status === 502 && error.code === "http_502");
  assert.equal(bad.calls.length, 1);
  const lost = faulty((method, url, n) => (method === "POST" && url.endsWith("/v1/memories") && n === 1 ? "lose-reply" : null));
  const once = new MongomemClient({ baseUrl: BASE_URL, fetch: lost.impl, sleep: async () => {} });
  const lostError = await once.createMemory({ user_id: user, type: "semantic", payload: { subject: user, attribute: "c", value: "d" } }).catch((e: unknown) => e);
  assert.ok(lostError instanceof MongomemError && lostError.code === "unreachable");
  assert.equal(lost.calls.length, 1);
  const refused = faulty((method, url, n) => (method === "POST" && url.endsWith("/v1/memories") && n === 1 ? new Response("{}", { status: 503 }) : null));
  const retried = new MongomemClient({ baseUrl: BASE_URL, fetch: refused.impl, sleep: async () => {} });
  const written = await retried.createMemory({ user_id: user, type: "semantic", payload: { subject: user, attribute: "e", value: "f" } });
  assert.equal(written.decision, "ADD");
  assert.equal(refused.calls.length, 2);
});

test("the backoff without Retry-After grows from 250 ms with full jitter up to 8 s", () => {
  const policy = new RetryPolicy({}, () => 1);
  assert.deepEqual([0, 1, 2, 3, 5, 9].map((n) => policy.delayMs(n, null)), [250, 500, 1000, 2000, 8000, 8000]);
  assert.equal(new RetryPolicy({}, () => 0.5).delayMs(1, null), 250);
});

test("base URL and API key come from MONGOMEM_URL and MONGOMEM_API_KEY when not given", async () => {
  const seen: { url: string; key: string | null }[] = [];
  const spy: typeof fetch = async (input, init) => {
    seen.push({ url: String(input), key: new Headers(init?.headers).get("x-api-key") });
    return new Response("{}", { status: 200 });
  };
  process.env.MONGOMEM_URL = "http://memory.test:4000/";
  process.env.MONGOMEM_API_KEY = "mm_test_key";
  try {
    await new MongomemClient({ fetch: spy }).status();
    await new MongomemClient({ fetch: spy, baseUrl: "http://other.test", apiKey: "explicit" }).status();
  } finally {
    delete process.env.MONGOMEM_URL;
    delete process.env.MONGOMEM_API_KEY;
  }
  assert.deepEqual(seen, [
    { url: "http://memory.test:4000/v1/status", key: "mm_test_key" },
    { url: "http://other.test/v1/status", key: "explicit" },
  ]);
});

test("the client core imports no Node module (it runs wherever fetch does)", async () => {
  const core = ["index.js", "client.js", "env.js", "errors.js", "retry.js", "routes.js", "types.js", "generated/openapi.js"];
  const dist = new URL("../../dist/", import.meta.url);
  for (const file of core) {
    const code = await readFile(new URL(file, dist), "utf8");
    const imports = [
      ...code.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm),
      ...code.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
      ...code.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
    ].map((m) => m[1]!);
    assert.deepEqual(imports.filter((name) => !name.startsWith("./") && !name.startsWith("../")), [], `${file} imports ${imports}`);
    assert.doesNotMatch(code, /\brequire\(|\bBuffer\b|process\.(?!env)/, file);
  }
});

test("a base URL ending in /v1 works, an empty id and a bad timeout are refused with a clear error", async () => {
  const user = uid("v1");
  const withV1 = new MongomemClient({ baseUrl: `${BASE_URL}/v1/` });
  assert.equal(withV1.baseUrl, BASE_URL.replace(/\/+$/, ""));
  assert.deepEqual((await withV1.listThreads({ user_id: user })).threads, []);
  await assert.rejects(client().listTurns("", { user_id: user }), /session_id must not be empty/);
  for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => new MongomemClient({ baseUrl: BASE_URL, timeoutMs: bad }), /timeoutMs must be a number of milliseconds above 0/);
  }
  await assert.rejects(client().listThreads({ user_id: user }, { timeoutMs: 0 }), /timeoutMs/);
});
