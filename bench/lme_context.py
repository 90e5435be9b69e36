"""What `POST /v1/context` gives an agent on LongMemEval-S questions, in bench/locomo_context.py's shape.

Each file of the folder is one LongMemEval question in the LoCoMo layout (the shared dev split's
README: ~50 sessions, ~120k tokens of history; `question_date`, `question_type`), imported as its own
user. Each question is asked as of its date (`as_of`: nothing recorded after it, dates relative to it).
Per budget: evidence share (the turns LongMemEval marks `has_answer`, else the answer sessions' turns),
answer words, tokens used, context p50 / p95, and the same per question type (knowledge-update,
temporal-reasoning, ...).

    .venv/bin/python bench/lme_context.py DATA_DIR [--budgets 1000,2000,4000] [--keep DIR]
    .venv/bin/python bench/lme_context.py tests/data/lme-mini --budgets 300,600 --embeddings hashing

Loading is the slow part (recall indexes ~480 long turns per question): --keep DIR keeps the loaded
stack and reuses it; --limit-conversations N asks the first N questions only.
"""

from __future__ import annotations

import locomo_context

GOALS = {"evidence_share@2000": 0.85}  # issue 32: LongMemEval-S

if __name__ == "__main__":
    locomo_context.main("lme_context", GOALS, __doc__ or "")
