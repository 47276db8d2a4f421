"""The command line: ``main`` (argument parsing and the commands), ``memory``,
``why`` and ``demo``."""
