"""The one token estimate: about 4 characters a token.

No tokenizer: the counts it serves (the `max_tokens` promotion rule on the record path, a context block's
budget) are budgets a caller sets in round figures, and a model's tokenizer would cost the record path its
cold start. English text runs about 4 characters a token with the common BPE tokenizers; code and
non-Latin scripts run fewer, so a budget in these tokens is a little generous for them.
"""

CHARS_PER_TOKEN = 4


def tokens_in(chars: int) -> int:
    """About how many tokens `chars` characters are (at least 1)."""
    return chars // CHARS_PER_TOKEN + 1


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` is."""
    return tokens_in(len(text))
