"""Embedders: one contract (base), the remote API client, the offline local model, and the test double."""
