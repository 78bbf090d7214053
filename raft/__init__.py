"""rillet package."""
