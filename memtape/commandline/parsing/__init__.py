"""The ``memtape`` parser, one module per family of commands.

``top`` builds the top parser: every command's name and one-line help (all
that ``memtape --help`` and a mistyped command's "did you mean" read), and
the arguments of the one command being run only. Each family module (``runs``,
``viewer``, ``lab``, ``importing``, ``servers``) lists its commands with what
fills in their arguments; ``arguments`` holds the arguments several share.
"""
