"""Command-line front end: parses input, renders events, holds no pipeline logic."""
