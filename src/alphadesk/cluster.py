"""Where fan-out work runs when it leaves this machine's processes: a Ray cluster
(``alphadesk.pool.batches.on_ray`` sends batches to it; a sweep sends its chunks).

Ray is an optional extra (``pip install 'alphadesk[ray]'``) and is imported only here, only
when a caller asks for a cluster, so nothing else pays its import or start-up time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

__all__ = ["RayCluster", "cluster_cpus"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RayCluster:
    """A Ray cluster to fan work out over.

    ``address`` None starts a local cluster in this process (or reuses the one already
    running here); ``"auto"`` joins the cluster started on this machine with ``ray start``;
    ``"ray://host:10001"`` joins a remote cluster through Ray Client. Every node needs
    alphadesk installed, and a shared ``ALPHADESK_DATA_DIR`` if the runs, the ledger and the
    response cache are to land in one store.
    """

    address: str | None = None

    def connect(self) -> Any:
        """Import Ray and join the cluster once; returns the ``ray`` module.

        Raises:
            RuntimeError: Ray is not installed.
        """
        try:
            import ray
        except ImportError:
            raise RuntimeError(
                "Ray is not installed: pip install 'alphadesk[ray]' (or run without --ray)"
            ) from None
        if not ray.is_initialized():
            logger.info("joining Ray cluster at %s", self.address or "a new local cluster")
            # a cluster of our own needs no dashboard; one we join keeps its own settings
            local: dict[str, Any] = {"include_dashboard": False} if self.address is None else {}
            ray.init(address=self.address, **local)
        return ray


def cluster_cpus(ray: Any) -> int:
    """The cluster's CPUs: one actor or task each, so none waits for a free slot forever."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
