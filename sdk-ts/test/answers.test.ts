/** Answers that are no answer of the API's (issue 33's eleventh probe, findings 4 and 5): a redirect is never
 * followed (the API key and a body stay with the base URL), and an empty answer is the SDK's own error. */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import { MongomemClient, MongomemError } from "@mongomem/client";

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "resolved";
  } catch (error) {
    return error instanceof MongomemError ? error.code : String(error);
  }
}

test("a redirect to another origin is never followed: that origin receives neither the key nor a body", async () => {
  // Given an API that answers every request with a 307 to another origin, which records what it receives
  const seen: { key: string | undefined; method: string | undefined }[] = [];
  const other = await serve((req, res) => {
    seen.push({ key: req.headers["x-api-key"] as string | undefined, method: req.method });
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ memories: [], next_cursor: null }));
  });
  const api = await serve((_req, res) => {
    res.writeHead(307, { location: `http://localhost:${other.port}/v1/memories`, "content-length": "0" }).end();
  });
  try {
    const client = new MongomemClient({ baseUrl: `http://127.0.0.1:${api.port}`, apiKey: "mm_secret", retries: 0 });
    // When the client lists memories and writes one
    const listed = await codeOf(client.listMemories({ user_id: "u" }));
    const written = await codeOf(client.createMemory({ user_id: "u", type: "semantic", payload: { subject: "s", attribute: "a", value: "v" } }));
    // Then both are the SDK's invalid_response, and the other origin received nothing
    assert.deepEqual([listed, written], ["invalid_response", "invalid_response"]);
    assert.deepEqual(seen, []);
  } finally {
    api.server.close();
    other.server.close();
  }
});

test("an answer without a body (or without a JSON object) is invalid_response, for a page and a document", async () => {
  // Given an API that answers every GET with 200 and no content, or a JSON null
  for (const content of ["", "null"]) {
    const api = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(content.length) }).end(content);
    });
    try {
      const client = new MongomemClient({ baseUrl: `http://127.0.0.1:${api.port}`, apiKey: "k", retries: 0 });
      // When a memory is read and the memories are iterated
      const read = await codeOf(client.getMemory("mem-1", { user_id: "u" }));
      const iterated = await codeOf((async () => {
        for await (const _ of client.iterMemories({ user_id: "u" })) void _;
      })());
      // Then both are the SDK's own error, never undefined nor a raw TypeError
      assert.deepEqual([read, iterated], ["invalid_response", "invalid_response"], content);
    } finally {
      api.server.close();
    }
  }
});
