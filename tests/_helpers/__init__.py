"""Helpers shared by the test layers (paths, corpora loaders, the local judge server)."""
