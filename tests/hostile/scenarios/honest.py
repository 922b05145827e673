"""The stub as it should be: the walk ends normally (the suite's own check of the stub)."""
EXPECT = None
