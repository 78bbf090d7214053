"""Unit tests of the request handlers, one module per handler module (a package: their names
repeat the integration tests')."""
