"""The package version, in a module of its own so lower layers can read it without loading the front door."""

__version__ = "0.1.0"
