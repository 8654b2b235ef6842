"""A check's result as text for a terminal (``text``, ``termtext``) and as JSON/JSONL (``jsonout``)."""
