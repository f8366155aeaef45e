"""Results: the results object, saved runs, comparisons with a baseline, and snapshots."""
