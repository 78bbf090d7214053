"""Who is on a connection and what they may do: the session (principal, host, node
id), SASL, the ACL authorizer and each request's authorization, the internal-API
gate, forwarded callers, and the node's TLS contexts and local certificate
authority. The node handshake and cluster secret are membership, in ``cluster``.
"""
