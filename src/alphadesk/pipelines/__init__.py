"""Pipelines compose agents into whole systems (csp, desk, algo, assistant)."""
