/** An error answer of the API (`{"error": {"code", "message", "details"}}`), or no answer at all. */
export class MongomemError extends Error {
  override readonly name = "MongomemError";
  /** The HTTP status; null when the API could not be reached or did not answer in time. */
  readonly status: number | null;
  /** The API's error code (`validation_error`, `not_found`, ...), `http_<status>` when it sent none,
   * or `unreachable` / `timeout` / `invalid_response` when there was no usable answer. */
  readonly code: string;
  /** What went wrong, in the API's words. */
  override readonly message: string;
  /** The API's `details`: for a validation error, each bad field's path and problem. */
  readonly details: unknown;
  /** Seconds the server asked to wait (Retry-After), when it said. */
  readonly retryAfter: number | null;

  constructor(
    status: number | null,
    code: string,
    message: string,
    details: unknown = null,
    retryAfter: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(`${status ?? "no response"} ${code}: ${message}`, options);
    this.status = status;
    this.code = code;
    this.message = message;
    this.details = details;
    this.retryAfter = retryAfter;
  }

  /** No answer at all (unreachable, timed out): worth a retry when the request may be sent twice. */
  get transportFailure(): boolean {
    return this.status === null && (this.code === "unreachable" || this.code === "timeout");
  }

  /** Each field a validation error names: `[{path: "turns.0.role", message: "..."}]` (empty otherwise). */
  get fieldErrors(): { path: string; message: string }[] {
    const details = this.details as { errors?: unknown } | unknown[] | null;
    const list = Array.isArray(details) ? details : Array.isArray((details as { errors?: unknown })?.errors)
      ? ((details as { errors: unknown[] }).errors)
      : [];
    return list.flatMap((item) => {
      if (!item || typeof item !== "object") return [];
      const entry = item as Record<string, unknown>;
      const loc = entry.loc ?? entry.path ?? entry.field;
      const path = Array.isArray(loc) ? loc.join(".") : String(loc ?? "");
      const message = String(entry.msg ?? entry.message ?? "");
      return [{ path, message }];
    });
  }
}

/** The error a non-2xx answer stands for (the API's envelope, API Gateway's `{"message"}`, or the text). */
export async function errorFromResponse(response: Response): Promise<MongomemError> {
  const status = response.status;
  const text = await response.text().catch(() => "");
  let code = `http_${status}`;
  let message = text.slice(0, 500);
  let details: unknown = null;
  try {
    const payload = text ? (JSON.parse(text) as unknown) : null;
    if (payload && typeof payload === "object") {
      const error = (payload as { error?: unknown }).error;
      if (error && typeof error === "object") {
        const e = error as { code?: unknown; message?: unknown; details?: unknown };
        code = typeof e.code === "string" && e.code ? e.code : code;
        message = typeof e.message === "string" && e.message ? e.message : message;
        details = e.details ?? null;
      } else if (typeof (payload as { message?: unknown }).message === "string") {
        message = (payload as { message: string }).message; // API Gateway's own errors
      }
    }
  } catch {
    // not JSON: keep the text
  }
  return new MongomemError(status, code, message || `HTTP ${status}`, details, parseRetryAfter(response.headers.get("retry-after")));
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); null when absent or bad. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.max(0, Number(trimmed));
  const when = Date.parse(trimmed);
  return Number.isNaN(when) ? null : Math.max(0, (when - now) / 1000);
}
