"""The base of the models a function imports at cold start: each builds its schema on first use.

A pydantic class builds its validator and serializer when it is defined unless `defer_build` is set;
a function imports every model of its routes, and most requests use a few of them (the record path's
POST needs none of the session and snapshot models its GET routes return), so the build waits until a
model is first validated, dumped or asked for its schema.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)
