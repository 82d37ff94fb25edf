"""The adapter framework every provider package is built on (see adapters/README.md)."""
