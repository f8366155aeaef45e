"""Inputs of an experiment: needle sets, expansion terms, books and their text cleaning."""
