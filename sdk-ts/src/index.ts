export { MongomemClient, DEFAULT_BASE_URL, clientToken } from "./client.js";
export type { MongomemClientOptions, RequestOptions } from "./client.js";
export { MongomemError, parseRetryAfter } from "./errors.js";
export { RetryPolicy, RETRY_STATUSES, REFUSED_STATUSES } from "./retry.js";
export type { RetryOptions } from "./retry.js";
export { ROUTES } from "./routes.js";
export type { Route, RouteName, OperationId, UncoveredOperations } from "./routes.js";
export type * from "./types.js";
export type { components, operations, paths } from "./generated/openapi.js";
