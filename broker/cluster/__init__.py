"""This node as a member of the cluster: its cluster secret and the node handshake that
proves it, its link to the active controller, its view of the metadata (and when it
is fresh enough to answer), its broker registration and heartbeats, and the Raft
quorum it runs or observes.
"""
