"""Live capture: a running agent's requests to its provider, recorded as they happen.

``threads`` groups a capture's exchanges into conversations (a pure function
of a request and what was seen before it), for the recorder that writes the
capture file and for the importer that reads it
(``memtape.lab.importers.capture``).
"""
