/**
 * Every route of the API once: the client method's name, the wire operation, and whether a request
 * may be sent again after a lost answer. `npm test` checks this table against openapi.json, and the
 * type below fails the build when the document gains an operation no method covers.
 */
import type { operations } from "./generated/openapi.js";

export type OperationId = keyof operations;
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface Route {
  readonly op: OperationId;
  readonly method: HttpMethod;
  readonly path: string;
  /** May the request be re-sent after a lost answer or a 5xx? (GET, PUT and DELETE always may.) */
  readonly safe?: boolean;
}

export const ROUTES = {
  // short-term memory: turns and sessions
  recordTurns: { op: "post_turns_v1_sessions__session_id__turns_post", method: "POST", path: "/v1/sessions/{session_id}/turns", safe: true },
  listTurns: { op: "get_turns_v1_sessions__session_id__turns_get", method: "GET", path: "/v1/sessions/{session_id}/turns" },
  deleteTurns: { op: "delete_turns_v1_sessions__session_id__turns_delete", method: "DELETE", path: "/v1/sessions/{session_id}/turns" },
  getSession: { op: "get_session_v1_sessions__session_id__get", method: "GET", path: "/v1/sessions/{session_id}" },
  flush: { op: "flush_v1_sessions__session_id__flush_post", method: "POST", path: "/v1/sessions/{session_id}/flush", safe: true },
  importHistory: { op: "import_history_v1_import_post", method: "POST", path: "/v1/import", safe: true },
  // long-term memories
  createMemory: { op: "create_memory_v1_memories_post", method: "POST", path: "/v1/memories", safe: false },
  listMemories: { op: "list_memories_v1_memories_get", method: "GET", path: "/v1/memories" },
  getMemory: { op: "get_memory_v1_memories__memory_id__get", method: "GET", path: "/v1/memories/{memory_id}" },
  deleteMemory: { op: "delete_memory_v1_memories__memory_id__delete", method: "DELETE", path: "/v1/memories/{memory_id}" },
  searchMemories: { op: "search_memories_v1_memories_search_post", method: "POST", path: "/v1/memories/search", safe: true },
  listConflicts: { op: "list_conflicts_v1_memories_conflicts_get", method: "GET", path: "/v1/memories/conflicts" },
  listDomains: { op: "list_domains_v1_domains_get", method: "GET", path: "/v1/domains" },
  getSkill: { op: "get_skill_v1_memories__memory_id__skill_get", method: "GET", path: "/v1/memories/{memory_id}/skill" },
  procedureFeedback: { op: "post_feedback_v1_memories__memory_id__feedback_post", method: "POST", path: "/v1/memories/{memory_id}/feedback", safe: false },
  discoverProcedures: { op: "discover_procedures_v1_procedures_discover_post", method: "POST", path: "/v1/procedures/discover", safe: true },
  // recall and context
  recall: { op: "recall_v1_recall_post", method: "POST", path: "/v1/recall", safe: true },
  buildContext: { op: "build_context_v1_context_post", method: "POST", path: "/v1/context", safe: true },
  // working memory
  getWorkingMemory: { op: "get_working_memory_v1_working_memory_get", method: "GET", path: "/v1/working-memory" },
  replaceWorkingMemory: { op: "put_working_memory_v1_working_memory_put", method: "PUT", path: "/v1/working-memory" },
  updateWorkingMemory: { op: "patch_working_memory_v1_working_memory_patch", method: "PATCH", path: "/v1/working-memory", safe: false },
  clearWorkingMemory: { op: "delete_working_memory_v1_working_memory_delete", method: "DELETE", path: "/v1/working-memory" },
  getWorkingMemoryTool: { op: "get_working_memory_tool_v1_working_memory_tool_get", method: "GET", path: "/v1/working-memory/tool" },
  applyWorkingMemoryTool: { op: "post_working_memory_tool_v1_working_memory_tool_post", method: "POST", path: "/v1/working-memory/tool", safe: false },
  // threads
  createThread: { op: "post_thread_v1_threads_post", method: "POST", path: "/v1/threads", safe: false },
  listThreads: { op: "list_threads_v1_threads_get", method: "GET", path: "/v1/threads" },
  getThread: { op: "get_thread_v1_threads__thread_id__get", method: "GET", path: "/v1/threads/{thread_id}" },
  updateThread: { op: "patch_thread_v1_threads__thread_id__patch", method: "PATCH", path: "/v1/threads/{thread_id}", safe: true },
  deleteThread: { op: "delete_thread_v1_threads__thread_id__delete", method: "DELETE", path: "/v1/threads/{thread_id}" },
  cloneThread: { op: "clone_thread_v1_threads__thread_id__clone_post", method: "POST", path: "/v1/threads/{thread_id}/clone", safe: false },
  // snapshots, users and the pipeline (the memory console's API)
  getSnapshot: { op: "get_snapshot_v1_snapshots__snapshot_id__get", method: "GET", path: "/v1/snapshots/{snapshot_id}" },
  retrySnapshot: { op: "retry_snapshot_v1_snapshots__snapshot_id__retry_post", method: "POST", path: "/v1/snapshots/{snapshot_id}/retry", safe: false },
  listFailedSnapshots: { op: "list_failed_snapshots_v1_snapshots_get", method: "GET", path: "/v1/snapshots" },
  listUsers: { op: "list_users_v1_users_get", method: "GET", path: "/v1/users" },
  listUserSessions: { op: "list_user_sessions_v1_users__user_id__sessions_get", method: "GET", path: "/v1/users/{user_id}/sessions" },
  listUserRequests: { op: "list_user_requests_v1_users__user_id__requests_get", method: "GET", path: "/v1/users/{user_id}/requests" },
  deleteUser: { op: "delete_user_v1_users__user_id__delete", method: "DELETE", path: "/v1/users/{user_id}" },
  memoryStats: { op: "get_memory_stats_v1_stats_memories_get", method: "GET", path: "/v1/stats/memories" },
  pipeline: { op: "get_pipeline_v1_pipeline_get", method: "GET", path: "/v1/pipeline" },
  status: { op: "get_status_v1_status_get", method: "GET", path: "/v1/status" },
  // administration (an admin key)
  adminStatus: { op: "admin_status_v1_admin_status_get", method: "GET", path: "/v1/admin/status" },
  listKeys: { op: "admin_list_keys_v1_admin_keys_get", method: "GET", path: "/v1/admin/keys" },
  createKey: { op: "admin_create_key_v1_admin_keys_post", method: "POST", path: "/v1/admin/keys", safe: false },
  revokeKey: { op: "admin_revoke_key_v1_admin_keys__key_id__delete", method: "DELETE", path: "/v1/admin/keys/{key_id}" },
} as const satisfies Record<string, Route>;

export type RouteName = keyof typeof ROUTES;
export type RouteOf<N extends RouteName> = (typeof ROUTES)[N];

/** Operations of the document that no client method covers: must be `never` (else the build fails). */
export type UncoveredOperations = Exclude<OperationId, RouteOf<RouteName>["op"]>;
const everyOperationHasAMethod: [UncoveredOperations] extends [never] ? true : UncoveredOperations = true;
void everyOperationHasAMethod;

export function resendSafe(route: Route): boolean {
  return route.safe ?? (route.method === "GET" || route.method === "PUT" || route.method === "DELETE");
}
