"""The partitions hosted on this node: each replica's log and high watermark, the
replica manager, replication (``replication/``), reconciling with committed
metadata, repair, cleaning and scrubbing, the topic settings logs are kept by,
producer ids and what a leader checks before an append, and the transaction
marker writer.
"""
