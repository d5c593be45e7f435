"""Agent evaluation: ADK eval sets and sessions, ADK-compatible scores, and respeval's own analyses."""
