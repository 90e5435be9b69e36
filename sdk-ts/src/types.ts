/** Request and response types of each client method, derived from the generated OpenAPI types. */
import type { components, operations } from "./generated/openapi.js";
import type { RouteName, RouteOf } from "./routes.js";

/** Every schema of the API by name: `Schemas["RecallResponse"]`, `Schemas["TurnIn"]`, ... */
export type Schemas = components["schemas"];

type Op<N extends RouteName> = operations[RouteOf<N>["op"]];
type JsonOf<T> = T extends { content: { "application/json": infer B } } ? B : undefined;
type SuccessOf<R> = R extends { 200: infer A }
  ? JsonOf<A>
  : R extends { 201: infer B }
    ? JsonOf<B>
    : R extends { 202: infer C }
      ? JsonOf<C>
      : unknown;

/** The JSON body a route takes (wire field names, as in the OpenAPI document). */
export type BodyOf<N extends RouteName> = JsonOf<NonNullable<Op<N>["requestBody"]>>;
/** The query parameters a route takes. */
export type QueryOf<N extends RouteName> = NonNullable<Op<N>["parameters"]["query"]>;
/** The path parameters a route takes. */
export type PathOf<N extends RouteName> = NonNullable<Op<N>["parameters"]["path"]>;
/** What a route answers with on success. */
export type ResultOf<N extends RouteName> = SuccessOf<Op<N>["responses"]>;

export type TurnIn = Schemas["TurnIn"];
export type TurnOut = Schemas["TurnOut"];
export type Thread = Schemas["Thread"];
export type WorkingMemoryState = Schemas["WorkingMemoryState"];
/**
 * The answer when `if_none_match` is still the cache key. `unchanged` is always sent (`true`), so
 * `"unchanged" in wm` tells the two answers apart and narrows the other branch to the state.
 */
export type WorkingMemoryUnchanged = { unchanged: true; cache_key: string };
export type WorkingMemoryContext = Schemas["WorkingMemoryContext"];
export type RecallResponse = Schemas["RecallResponse"];
export type RecalledTurn = Schemas["RecalledTurn"];
export type SearchResponse = Schemas["SearchResponse"];
export type ContextResponse = Schemas["ContextResponse"];
