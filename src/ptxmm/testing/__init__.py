"""Programs as tests: ``ptxmm test`` (``runner``: expectations, Dat3M CSVs, campaigns) and the pytest
plugin that turns ``.ptx``/``.litmus``/``.cu`` files with an expectation into test items."""
