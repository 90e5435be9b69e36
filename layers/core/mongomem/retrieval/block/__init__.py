"""The context block's pipeline, one module per stage, walked forward by `retrieval/context.py`:

    plan    (plan.py)     the request's sources, each with its priority and limits
    gather  (sources.py)  every source's candidates, at once; the same filters whether named or not
    pack    (pack.py)     the budget filled in priority, then value, order
    render  (render.py)   the sections, the block in its format, the response

`items.py` holds what every stage shares: the candidate, its value's constants and the token estimate.
"""
