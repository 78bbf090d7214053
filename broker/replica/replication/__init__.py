"""Partition replication (docs/replication.md): followers pull from the partition leader, the leader
tracks them, derives the high watermark from the in-sync replicas and asks the controller
to change the ISR. Pure cores (``leader_state``, ``follower_state``) with trio drivers."""
