"""The fund: the trading desk on every name of a book, then the portfolio manager."""
