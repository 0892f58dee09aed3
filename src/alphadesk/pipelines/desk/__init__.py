"""The trading desk: analysts, bull/bear debate, trader, risk discussion, judge, memory."""
