"""Client and node connections on both listeners (native and Kafka): the trio driver,
the sans-I/O connection protocol and the native front end, reading within the
node's byte budget, quotas and throttles, connection limits, and writing replies in
request order. Above the dispatcher, which it calls; nothing below imports it.
"""
