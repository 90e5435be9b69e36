/**
 * An embedding model that runs offline and gives the same vector for the same text every time: words are
 * hashed into 64 buckets (the feature-hashing idea mongomem's own `hashing` provider uses), then the vector
 * is normalised. It speaks the AI SDK's embedding-model interface (specification v3), which is what
 * `@mastra/memory`'s `Memory` takes as `embedder`, so Mastra's semantic recall runs here without a network.
 */

const DIM = 64;
const STOP = new Set(["a", "an", "the", "i", "my", "me", "you", "your", "is", "do", "what", "in", "of", "to", "and", "it", "am"]);

/** FNV-1a of a word: its bucket and sign. */
function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export function embed(text: string): number[] {
  const vector = new Array<number>(DIM).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOP.has(word)) continue;
    const h = fnv(word);
    vector[h % DIM]! += (h >>> 8) % 2 === 0 ? 1 : -1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}

export const hashingEmbedder = {
  specificationVersion: "v3" as const,
  provider: "mongomem-test",
  modelId: "hashing-64",
  maxEmbeddingsPerCall: 256,
  supportsParallelCalls: true,
  async doEmbed({ values }: { values: string[] }) {
    return { embeddings: values.map(embed), usage: { tokens: values.join(" ").length }, warnings: [] };
  },
};
