"""Pure-Python twins of ciyuan's algorithms: short, commented, slow, and the oracle the tests
hold the native core against."""
