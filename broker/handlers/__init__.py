"""Request handlers, one module per api.

A handler runs its ordering-sensitive part (an append) synchronously when the request is
read, and may return a coroutine for the part that waits (acks=all, fetch long polls). The
connection driver awaits those in request order, so responses keep the order of requests.
"""
