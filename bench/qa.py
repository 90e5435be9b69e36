"""Question answering on LoCoMo or LongMemEval through `POST /v1/context`, with your own reader and judge.

bench/locomo_context.py builds every question's block (import, settle, ask at --budget, as of the
question's date where the file gives one); then a reader model answers from the block and a judge model
says whether the answer is right, the way LongMemEval judges (a yes/no question to an LLM, with a rule
per question type - our wording, the paper's criteria). Prints the triple the field reports: accuracy,
context tokens per question, context p50 / p95 - on the corrected labels and the original ones.

    # any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp's server, Ollama, ...): the key is read
    # from the variable --api-key-env names (none for a local server)
    .venv/bin/python bench/qa.py DATA_DIR --reader openai:gpt-4o-mini --judge openai:gpt-4o \\
        --base-url https://api.openai.com/v1 --api-key-env OPENAI_API_KEY
    # Amazon Bedrock (Converse; the usual AWS credentials and region)
    .venv/bin/python bench/qa.py DATA_DIR --reader bedrock:amazon.nova-lite-v1:0 \\
        --judge bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0
    # the stand-ins (no model: the block's line that shares most words with the question; the judge
    # checks the gold answer's words) - the small run of `make test`
    .venv/bin/python bench/qa.py tests/data/lme-mini --budget 600 --embeddings hashing

Also takes bench/locomo_context.py's options (--keep DIR, --limit-questions, ...). --answers FILE writes
every question, block size, answer and verdict (JSON lines).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import locomo_context
from locomo_context import answer_words, log, percentile, words

READER_PROMPT = """You answer a user's question from what a memory service recalled of your earlier \
conversations with them. The memories are below, each with the date it was said.{today}

{context}

Question: {question}
Answer in a few words. If the memories do not hold the answer, say you do not know."""

# The judge's rules, per LongMemEval question type (our wording of the benchmark's criteria).
JUDGE_RULES = {
    "default": "Say yes if the response contains the correct answer or something equivalent to it. "
    "Say no if it gives a different answer, or only part of an answer that has several parts.",
    "temporal-reasoning": "Say yes if the response contains the correct answer or something equivalent. "
    "Counts of days, weeks or months that are off by one still count as correct. Otherwise say no.",
    "knowledge-update": "The answer changed over time. Say yes if the response gives the latest answer, "
    "even if it also mentions an earlier value as earlier. Say no if it gives an outdated value as the answer.",
    "single-session-preference": "The correct answer is a description of what the user would want. Say yes "
    "if the response follows the user's preferences as described, even without every detail. Otherwise no.",
    "abstention": "The question cannot be answered from the history. Say yes if the response says it does "
    "not know or cannot tell; say no if it answers anyway.",
}
JUDGE_PROMPT = """You check a question-answering system.
Question: {question}
Correct answer: {answer}
Response: {response}

{rule} Reply with the single word yes or no."""

Model = Callable[[str], str]


def openai_model(name: str, base_url: str, key_env: str | None) -> Model:
    key = os.environ.get(key_env, "") if key_env else ""

    def ask(prompt: str) -> str:
        body = {"model": name, "messages": [{"role": "user", "content": prompt}], "temperature": 0}
        req = urllib.request.Request(
            base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={
                "content-type": "application/json",
                **({"authorization": f"Bearer {key}"} if key else {}),
            },
        )
        with urllib.request.urlopen(req, timeout=120) as resp:
            return str(json.loads(resp.read())["choices"][0]["message"]["content"]).strip()

    return ask


def bedrock_model(name: str) -> Model:
    import boto3

    client = boto3.client("bedrock-runtime")

    def ask(prompt: str) -> str:
        out = client.converse(
            modelId=name,
            messages=[{"role": "user", "content": [{"text": prompt}]}],
            inferenceConfig={"temperature": 0},
        )
        return "".join(c.get("text", "") for c in out["output"]["message"]["content"]).strip()

    return ask


def stand_in_reader(prompt: str) -> str:
    """The block's line that shares most words with the question (no model)."""
    question = prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]
    asked = set(words(question)) - locomo_context.FUNCTION_WORDS
    lines = [line for line in prompt.split("\n") if line.startswith(("[", "- [", "  ["))]
    best = max(lines, key=lambda line: len(asked & set(words(line))), default="I do not know.")
    return best.split("] ", 1)[-1]


def stand_in_judge(prompt: str) -> str:
    """Yes when every word of the correct answer is in the response (bench/locomo_context's answer words)."""
    answer = prompt.split("Correct answer: ", 1)[1].split("\nResponse: ", 1)[0]
    response = prompt.split("\nResponse: ", 1)[1]
    return "yes" if answer_words(answer) <= set(words(response)) else "no"


def model_of(spec: str, base_url: str, key_env: str | None, stand_in: Model) -> Model:
    kind, _, name = spec.partition(":")
    if kind == "stand-in":
        return stand_in
    if kind == "openai" and name:
        return openai_model(name, base_url, key_env)
    if kind == "bedrock" and name:
        return bedrock_model(name)
    raise SystemExit(f"unknown model {spec!r}: stand-in, openai:MODEL or bedrock:MODEL")


def judge_rule(row: dict[str, Any]) -> str:
    if str(row.get("question_id", "")).endswith("_abs"):
        return JUDGE_RULES["abstention"]
    return JUDGE_RULES.get(str(row.get("type")), JUDGE_RULES["default"])


def verdict(judge: Model, row: dict[str, Any], answer: Any, response: str) -> bool:
    prompt = JUDGE_PROMPT.format(
        question=row["question"], answer=answer, response=response, rule=judge_rule(row)
    )
    return judge(prompt).strip().lower().startswith("yes")


def main() -> None:
    parser = locomo_context.parser(__doc__ or "")
    parser.add_argument("--budget", type=int, default=2000, help="the block's token budget")
    parser.add_argument("--reader", default="stand-in", help="stand-in, openai:MODEL or bedrock:MODEL")
    parser.add_argument("--judge", default="stand-in", help="stand-in, openai:MODEL or bedrock:MODEL")
    parser.add_argument(
        "--base-url", default="http://127.0.0.1:8080/v1", help="the OpenAI-compatible endpoint"
    )
    parser.add_argument("--api-key-env", help="the variable holding its key (none: no key)")
    parser.add_argument("--answers", type=Path, help="write every answer and verdict here (JSON lines)")
    args = parser.parse_args()
    args.budgets, args.with_context = str(args.budget), True
    reader = model_of(args.reader, args.base_url, args.api_key_env, stand_in_reader)
    judge = model_of(args.judge, args.base_url, args.api_key_env, stand_in_judge)
    result_out, sys.stdout = sys.stdout, sys.stderr
    rows, meta = locomo_context.run(args)
    b = str(args.budget)
    out = []
    for n, row in enumerate(rows, start=1):
        today = f"\nToday is {row['as_of'][:10]}." if row.get("as_of") else ""
        context = re.sub(r"</?mongomem-memory[^>]*>\n?|\[/?mongomem-memory[^\]]*\]\n?", "", row[b]["context"])
        response = reader(READER_PROMPT.format(today=today, context=context, question=row["question"]))
        right = verdict(judge, row, row["answer"], response)
        right_original = (
            right
            if row["original_answer"] == row["answer"]
            else verdict(judge, row, row["original_answer"], response)
        )
        out.append({**row, "response": response, "correct": right, "correct_original": right_original})
        if n % 25 == 0:
            log(f"{n} answered; accuracy {statistics.fmean(r['correct'] for r in out):.3f}")
    if args.answers:
        args.answers.write_text(
            "".join(json.dumps({k: v for k, v in r.items() if k != b}) + "\n" for r in out)
        )
    ms = [r[b]["ms"] for r in out]
    types = sorted({r["type"] for r in out})
    result = {
        "bench": "qa",
        "reader": args.reader,
        "judge": args.judge,
        "budget": args.budget,
        "n": len(out),
        "accuracy": round(statistics.fmean(r["correct"] for r in out), 3) if out else 0.0,
        "accuracy_original": round(statistics.fmean(r["correct_original"] for r in out), 3) if out else 0.0,
        "tokens_per_question": round(statistics.fmean(r[b]["tokens"] for r in out), 1) if out else 0.0,
        "context_p50_ms": round(percentile(ms, 50), 1) if ms else None,
        "context_p95_ms": round(percentile(ms, 95), 1) if ms else None,
        "by_type": {
            t: round(statistics.fmean(r["correct"] for r in out if r["type"] == t), 3) for t in types
        },
        **{k: meta[k] for k in ("conversations", "settle_s", "wall_s", "embeddings")},
    }
    print(json.dumps(result), file=result_out, flush=True)


if __name__ == "__main__":
    main()
