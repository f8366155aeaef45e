"""What to run: the option table, its value parsers and the frozen experiment config."""
