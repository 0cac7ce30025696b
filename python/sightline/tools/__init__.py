"""Agent tools: small dataclasses in an explicit registry, picked per turn by a policy."""
