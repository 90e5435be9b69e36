"""Working memory: a per-user (resource) or per-thread scratchpad in template or schema mode, as in Mastra.

config (the project config's part, validated on every cold start: no jsonschema unless a schema is
set), service (read, replace, merge, clear with compare-and-set), merge and tool, ports (the store).
Nothing is imported here: validating the project config must not pull in the service and jsonschema.
"""
