"""The CSP screen: a universe on one or many dates, a cheap pre-filter first, the CSP desk
on the survivors, ranked per date and saved as a table."""
