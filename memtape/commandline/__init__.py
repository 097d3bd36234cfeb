"""The command line's commands, one module each, and what several of them share.

``memtape.cli`` builds the parser without importing any of them: a command's
module (and whatever it needs: the viewer, the lab, the stores) is imported
when that command runs, so that ``memtape --help`` starts quickly. Each
command module has a ``run(args) -> int`` (``generate`` has one per kind).
"""
