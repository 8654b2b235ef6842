"""The command line: thin click shells over the Python API (``main`` holds the ``ptxmm`` group and
``check``/``test``; the other modules register the commands of their name)."""
