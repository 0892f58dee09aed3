import backtrader as bt


class WriteOutside(bt.Strategy):
    """Overwrite files outside the scratch space (targets separated by '|')."""

    params = (("target", ""),)

    def __init__(self):
        errors = []
        for path in self.p.target.split("|"):
            try:
                with open(path, "w") as handle:
                    handle.write("pwned")
            except OSError as exc:
                errors.append(f"{path}: {type(exc).__name__}")
                continue
            raise RuntimeError(f"ESCAPED: wrote {path}")
        raise RuntimeError("blocked: " + "; ".join(errors))
