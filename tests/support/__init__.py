"""Test support: a local OpenAI-compatible server and the fixtures that serve it."""
