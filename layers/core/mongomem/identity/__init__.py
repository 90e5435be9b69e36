"""Identity: API keys (hashed at rest), principals and the rules that scope a request."""
