"""Sans-I/O wire layer: frames, message schemas, error codes and the record-batch codec.

Nothing here touches sockets, files or clocks; drivers feed bytes in and take bytes out.
"""
