"""Measuring: the study's metrics, their bootstrap intervals and the retrieval view."""
