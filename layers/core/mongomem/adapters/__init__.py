"""Adapters: the only modules that import drivers and SDKs."""
