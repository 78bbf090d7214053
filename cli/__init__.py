"""rillet command line."""
