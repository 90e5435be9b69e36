"""The deployed twin: the stack `sam build` produced, run with its own defaults (see stack.py)."""

from .stack import ACCOUNT, REGION, DeployedStack, Twin

__all__ = ["ACCOUNT", "REGION", "DeployedStack", "Twin"]
