"""Embedding: model names and loading, the embedders, batching and the embedding cache."""
