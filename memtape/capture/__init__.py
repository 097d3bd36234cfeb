"""Live capture: a local reverse proxy (``memtape record``) and SDK client wrappers
(``wrap``) that write what an agent sent its provider and what it got back, one
exchange a line, to a capture file (docs/reference/capture-format.md).

The proxy is a pipe and recording is a side effect: every byte is relayed as it
arrives; the capture is assembled beside it and written once the exchange ends.
"""
