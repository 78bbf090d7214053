"""SASL authentication of clients: SCRAM-SHA-256/512 and PLAIN (docs/security.md)."""
