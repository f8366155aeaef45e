"""Building the grid: case ids, token-exact haystacks with their needles, and chunks."""
