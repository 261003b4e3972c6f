"""Agents: the model side of speedproof. Models guess here; code elsewhere proves."""
