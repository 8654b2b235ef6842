"""Campaigns: ``ptxmm gen`` (tests from cycles of relaxations), ``ptxmm diff`` (the tests that tell
two models apart) and the streaming, resumable, distributable runs of many tests (docs/campaigns.md)."""
