"""Pydantic domain models shared by the API, the logic and the adapters."""
