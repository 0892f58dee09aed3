"""The cash-secured-put desk: chart, options and research analysts, then synthesis."""
