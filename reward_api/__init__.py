"""The verifiable-reward service: grade batches of completions over HTTP."""

__version__ = "0.1.0"
