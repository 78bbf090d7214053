"""Sans-I/O wire layer: frames, message schemas, error codes and the record-batch codec.

Nothing here touches sockets or clocks; drivers feed bytes in and take bytes out. The one
exception is :mod:`atomic_file`, the durable small-file primitive every layer shares.
"""
