"""HTTP API: Powertools event_handler routes, error mapping, OpenAPI."""
