/**
 * Splitting a run's turns into the batches the API takes: at most `maxBatch` turns (the API's
 * memory.limits.max_batch, 100 by default) and a body well under max_body_bytes (4 MiB). A turn whose content
 * is over max_content_bytes (1 MiB) is recorded with the content cut to fit and a note saying how much was
 * left out (`metadata.truncated_bytes`); the caller is told which turns were cut. Nothing is dropped silently.
 */
import type { Schemas } from "./types.js";

type TurnIn = Schemas["TurnIn"];

export interface BatchLimits {
  /** Turns per request (the API's memory.limits.max_batch; default 100). */
  maxBatch?: number;
  /** UTF-8 bytes of one turn's content (memory.limits.max_content_bytes; default 1 MiB). */
  maxContentBytes?: number;
  /** UTF-8 bytes of one request's turns (kept under memory.limits.max_body_bytes, 4 MiB; default 3 MiB). */
  maxBatchBytes?: number;
}

/** A turn that was recorded cut to the content limit. */
export interface TruncatedTurn {
  /** Its position among the turns given. */
  index: number;
  role: TurnIn["role"];
  /** The content's size as given, and how many bytes of it were not recorded. */
  bytes: number;
  droppedBytes: number;
}

const encoder = new TextEncoder();

export function splitTurns(turns: TurnIn[], limits: BatchLimits = {}): { batches: TurnIn[][]; truncated: TruncatedTurn[] } {
  const maxBatch = limits.maxBatch ?? 100;
  const maxContent = limits.maxContentBytes ?? 1024 * 1024;
  const maxBytes = limits.maxBatchBytes ?? 3 * 1024 * 1024;
  const truncated: TruncatedTurn[] = [];
  const batches: TurnIn[][] = [];
  let batch: TurnIn[] = [];
  let size = 0;
  turns.forEach((turn, index) => {
    let fitted = turn;
    const bytes = encoder.encode(turn.content ?? "").length;
    if (bytes > maxContent) {
      const note = `\n[mongomem: ${bytes} bytes; the rest of this message was not recorded]`;
      const kept = cutUtf8(turn.content ?? "", maxContent - encoder.encode(note).length - 8);
      const droppedBytes = bytes - encoder.encode(kept).length;
      fitted = { ...turn, content: kept + note, metadata: { ...(turn.metadata ?? {}), truncated_bytes: droppedBytes } };
      truncated.push({ index, role: turn.role, bytes, droppedBytes });
    }
    const weight = encoder.encode(JSON.stringify(fitted)).length;
    if (batch.length > 0 && (batch.length >= maxBatch || size + weight > maxBytes)) {
      batches.push(batch);
      batch = [];
      size = 0;
    }
    batch.push(fitted);
    size += weight;
  });
  if (batch.length) batches.push(batch);
  return { batches, truncated };
}

/** The longest prefix of `text` whose UTF-8 encoding is at most `limit` bytes (never a split character). */
export function cutUtf8(text: string, limit: number): string {
  const bytes = encoder.encode(text);
  if (bytes.length <= limit) return text;
  let end = Math.max(0, limit);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}
