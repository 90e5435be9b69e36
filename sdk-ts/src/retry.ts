/**
 * The retry policy of the Python SDK (mongomem.retrying), the same decisions and waits:
 * 408, 429, 500, 502, 503, 504, timeouts and lost connections are retried; a request that must not be
 * sent twice retries only 429 and 503 (the server refused it before doing anything). Waits grow
 * exponentially with full jitter; a server's Retry-After is honoured instead, up to `maxRetryAfter`.
 */
import { MongomemError } from "./errors.js";

export const RETRY_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);
/** Statuses that say the server did nothing: safe to retry even a request that must not run twice. */
export const REFUSED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** Backoff base in ms: retry n waits uniform [0, min(maxBackoffMs, backoffMs * 2^n)] (default 250). */
  backoffMs?: number;
  /** Cap of one backoff wait in ms (default 8000). */
  maxBackoffMs?: number;
  /** Longest Retry-After honoured, in seconds (default 30). */
  maxRetryAfter?: number;
}

export class RetryPolicy {
  readonly retries: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxRetryAfter: number;

  constructor(options: RetryOptions = {}, private readonly random: () => number = Math.random) {
    this.retries = Math.max(0, options.retries ?? 3);
    this.backoffMs = options.backoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 8000;
    this.maxRetryAfter = options.maxRetryAfter ?? 30;
  }

  /** Whether `error` is worth another attempt; `resendSafe` false for a request that must not run twice. */
  retryable(error: unknown, resendSafe: boolean): boolean {
    if (!(error instanceof MongomemError)) return false;
    if (error.status !== null) return (resendSafe ? RETRY_STATUSES : REFUSED_STATUSES).has(error.status);
    return resendSafe && error.transportFailure;
  }

  /** Milliseconds before retry `retryNumber` (0-based): the server's Retry-After (capped), else backoff. */
  delayMs(retryNumber: number, retryAfter: number | null): number {
    if (retryAfter !== null && retryAfter >= 0) return Math.min(retryAfter, this.maxRetryAfter) * 1000;
    return Math.min(this.maxBackoffMs, this.backoffMs * 2 ** retryNumber) * this.random();
  }

  /** Run `attempt` until it succeeds, fails for good or runs out of retries (the last error is thrown). */
  async run<T>(
    attempt: () => Promise<T>,
    resendSafe: boolean,
    sleep: (ms: number) => Promise<void>,
    onRetry?: (retryNumber: number, error: MongomemError, waitMs: number) => void,
  ): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        return await attempt();
      } catch (error) {
        if (retry >= this.retries || !this.retryable(error, resendSafe)) throw error;
        const failure = error as MongomemError;
        const wait = this.delayMs(retry, failure.retryAfter);
        onRetry?.(retry + 1, failure, wait);
        await sleep(wait);
      }
    }
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
