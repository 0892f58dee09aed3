"""Market-data providers: bundled, local, yahoo, sec."""
