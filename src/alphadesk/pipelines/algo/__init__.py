"""The strategy lab: research swarm, strategy development, parallel backtests, quality gate."""
